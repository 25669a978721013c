"""Rprop and ASGD against PyTorch step by step (params and state dicts), plus optim's aliases."""

from __future__ import annotations

import numpy as np
import pytest

import hookgrad
from tests.optim.test_optimizers import SHAPES, TOL, _assert_state_close, _case_id, _Run

pytestmark = pytest.mark.oracle

CASES = [
    ("Rprop", {}),
    ("Rprop", {"lr": 0.05, "etas": (0.3, 1.5), "step_sizes": (1e-3, 0.2), "maximize": True}),
    ("ASGD", {}),
    ("ASGD", {"lr": 0.05, "lambd": 0.01, "alpha": 0.5, "t0": 3, "weight_decay": 0.1}),
    ("ASGD", {"t0": 0, "maximize": True}),
]


@pytest.mark.parametrize("dt", [np.float32, np.float64], ids=["f32", "f64"])
@pytest.mark.parametrize("case", CASES, ids=_case_id)
def test_matches_torch_step_by_step(torch, case, dt):
    name, kwargs = case
    rng = np.random.default_rng(3)
    init = [rng.standard_normal(s).astype(dt) for s in SHAPES]
    mine, theirs = _Run(hookgrad, name, kwargs, init), _Run(torch, name, kwargs, init)
    for step in range(10):
        grads = [rng.standard_normal(s).astype(dt) for s in SHAPES]
        if step % 3 == 1:
            grads[1] = None
        if step == 4:  # a repeated gradient keeps Rprop's signs, so its step sizes grow
            grads = last
        last = grads
        mine.step(grads)
        theirs.step(grads)
        for p, q in zip(mine.params, theirs.params, strict=True):
            np.testing.assert_allclose(p.detach().numpy(), q.detach().numpy(), **TOL[dt])
        _assert_state_close(mine.opt.state_dict(), theirs.opt.state_dict(), TOL[dt])


@pytest.mark.parametrize(("name", "kwargs"), [
    ("Rprop", {"etas": (1.0, 1.2)}), ("Rprop", {"lr": -1.0}), ("ASGD", {"lr": -0.1}),
    ("ASGD", {"weight_decay": -1.0}),
])
def test_invalid_hyperparameters(torch, name, kwargs):
    msgs = []
    for lib in (torch, hookgrad):
        with pytest.raises(ValueError) as e:
            getattr(lib.optim, name)([lib.ones(1, requires_grad=True)], **kwargs)
        msgs.append(str(e.value))
    assert msgs[0] == msgs[1]


def test_defaults_and_hooks(torch):
    def run(lib):
        out = []
        for name in ("Rprop", "ASGD"):
            log = []
            w = lib.ones(2, requires_grad=True)
            opt = getattr(lib.optim, name)([w])
            opt.register_step_pre_hook(lambda o, a, k: log.append("pre"))
            opt.register_step_post_hook(lambda o, a, k: log.append("post"))
            w.grad = lib.tensor([1.0, -1.0])
            opt.step()
            out.append((log, sorted(opt.defaults), sorted(opt.state[w])))
        return out, lib.optim.lr_scheduler.inf
    assert run(hookgrad) == run(torch)


def test_profile_hook_step(torch):
    def run(lib):
        log = []

        class Plain(lib.optim.Optimizer):
            def __init__(self, params):
                super().__init__(params, {"lr": 0.1})

            def raw(self, scale=1.0):
                log.append(("raw", scale))
                return scale

        wrapped = lib.optim.Optimizer.profile_hook_step(Plain.raw)
        opt = Plain([lib.ones(1, requires_grad=True)])
        opt.register_step_pre_hook(lambda o, a, k: log.append("pre") or (a, {"scale": 2.0}))
        opt.register_step_post_hook(lambda o, a, k: log.append(("post", k)))
        with lib.autograd.profiler.profile() as prof:
            out = wrapped(opt)
        names = [e.name for e in prof.function_events if e.name.startswith("Optimizer.step#")]
        return out, log, names, wrapped.__name__
    assert run(hookgrad) == run(torch)


@pytest.mark.parametrize("opt_name,kw", [
    ("SGD", {"base_lr": 0.01, "max_lr": 0.1, "step_size_up": 3}),
    ("SGD", {"base_lr": [0.01, 0.02], "max_lr": 0.1, "step_size_up": 2, "step_size_down": 4,
             "mode": "triangular2"}),
    ("Adam", {"base_lr": 0.001, "max_lr": 0.01, "step_size_up": 3, "mode": "exp_range",
              "gamma": 0.9}),
    ("SGD", {"base_lr": 0.01, "max_lr": 0.1, "step_size_up": 2, "cycle_momentum": False,
             "scale_fn": lambda x: 0.5 ** x, "scale_mode": "iterations"}),
])
def test_cyclic_lr_schedule(torch, opt_name, kw):
    def run(lib):
        a, b = lib.ones(1, requires_grad=True), lib.ones(1, requires_grad=True)
        extra = {"momentum": 0.9} if opt_name == "SGD" else {}
        opt = getattr(lib.optim, opt_name)([{"params": [a]}, {"params": [b]}], lr=0.5, **extra)
        sched = lib.optim.lr_scheduler.CyclicLR(opt, **kw)
        seen = []
        for _ in range(14):
            opt.step()
            sched.step()
            g = opt.param_groups
            seen.append([(round(x["lr"], 12), round(x.get("momentum", x.get("betas", (0,))[0]), 12))
                         for x in g])
        return seen, sorted(sched.state_dict()), sched.get_last_lr()
    h, t = run(hookgrad), run(torch)
    assert h == t


def test_cyclic_lr_errors(torch):
    def run(lib):
        opt = lib.optim.Adagrad([lib.ones(1, requires_grad=True)])
        out = []
        for kw in ({"mode": "bogus"}, {}):
            try:
                lib.optim.lr_scheduler.CyclicLR(opt, 0.1, 1.0, **kw)
            except ValueError as e:
                out.append(str(e))
        return out
    assert run(hookgrad) == run(torch)
