"""Adadelta, Adamax, NAdam, RAdam, Rprop, ASGD and LBFGS against PyTorch: the same weights and gradients,
compared after every step (parameters and full state dicts), state-dict round trips, hooks, and
constructor errors."""

from __future__ import annotations

import numpy as np
import pytest

import hookgrad
from tests.optim.test_optimizers import SHAPES, TOL, _assert_state_close, _case_id, _Run

pytestmark = pytest.mark.oracle

CASES = [
    ("Adadelta", {}),
    ("Adadelta", {"lr": 0.5, "rho": 0.5, "weight_decay": 0.1, "maximize": True}),
    ("Adamax", {}),
    ("Adamax", {"lr": 0.01, "betas": (0.3, 0.8), "weight_decay": 0.1, "maximize": True}),
    ("NAdam", {}),
    ("NAdam", {"lr": 0.01, "weight_decay": 0.1, "momentum_decay": 0.01}),
    ("NAdam", {"weight_decay": 0.1, "decoupled_weight_decay": True, "maximize": True}),
    ("RAdam", {}),
    ("RAdam", {"lr": 0.01, "weight_decay": 0.1, "betas": (0.8, 0.9)}),
    ("RAdam", {"weight_decay": 0.1, "decoupled_weight_decay": True, "maximize": True}),
    ("Rprop", {}),
    ("Rprop", {"lr": 0.05, "etas": (0.3, 1.5), "step_sizes": (1e-3, 0.2), "maximize": True}),
    ("ASGD", {}),
    ("ASGD", {"lr": 0.05, "lambd": 0.01, "alpha": 0.5, "t0": 3, "weight_decay": 0.1,
              "maximize": True}),
]


@pytest.mark.parametrize("dt", [np.float32, np.float64], ids=["f32", "f64"])
@pytest.mark.parametrize("case", CASES, ids=_case_id)
def test_matches_torch_step_by_step(torch, case, dt):
    name, kwargs = case
    rng = np.random.default_rng(1)
    init = [rng.standard_normal(s).astype(dt) for s in SHAPES]
    mine, theirs = _Run(hookgrad, name, kwargs, init), _Run(torch, name, kwargs, init)
    for step in range(12):
        grads = [rng.standard_normal(s).astype(dt) for s in SHAPES]
        if step % 3 == 1:
            grads[1] = None
        mine.step(grads)
        theirs.step(grads)
        for p, q in zip(mine.params, theirs.params, strict=True):
            np.testing.assert_allclose(p.detach().numpy(), q.detach().numpy(), **TOL[dt])
        _assert_state_close(mine.opt.state_dict(), theirs.opt.state_dict(), TOL[dt])


def _round_trip(lib, name, init, grads):
    """Three steps, a fresh optimizer loading the state dict, three more steps."""
    a, b = _Run(lib, name, {}, init), _Run(lib, name, {}, init)
    for g in grads[:3]:
        a.step(g)
    with lib.no_grad():
        for p, q in zip(b.params, a.params, strict=True):
            p.copy_(q)
    b.opt.load_state_dict(a.opt.state_dict())
    for g in grads[3:]:
        b.step(g)
    return b


@pytest.mark.parametrize("name", ["Adadelta", "Adamax", "NAdam", "RAdam", "Rprop", "ASGD"])
def test_state_dict_round_trip_continues_identically(torch, name):
    # load_state_dict casts float state (NAdam's mu_product too) to the parameter's dtype, in
    # both libraries
    rng = np.random.default_rng(2)
    init = [rng.standard_normal(s) for s in SHAPES]
    grads = [[rng.standard_normal(s) for s in SHAPES] for _ in range(6)]
    mine, theirs = _round_trip(hookgrad, name, init, grads), _round_trip(torch, name, init, grads)
    for p, q in zip(mine.params, theirs.params, strict=True):
        np.testing.assert_allclose(p.detach().numpy(), q.detach().numpy(), rtol=1e-12)
    _assert_state_close(mine.opt.state_dict(), theirs.opt.state_dict(), TOL[np.float64])


@pytest.mark.parametrize("name", ["Adadelta", "Adamax", "NAdam", "RAdam", "LBFGS", "Rprop",
                                  "ASGD"])
def test_step_hooks_fire(torch, name):
    def run(lib):
        log = []
        w = lib.ones(2, requires_grad=True)
        opt = getattr(lib.optim, name)([w])
        opt.register_step_pre_hook(lambda o, a, k: log.append("pre"))
        opt.register_step_post_hook(lambda o, a, k: log.append("post"))

        def closure():
            opt.zero_grad()
            loss = (w * w).sum()
            loss.backward()
            return loss

        opt.step(closure)
        return log, list(opt.state_dict()["param_groups"][0])

    assert run(hookgrad) == run(torch)


@pytest.mark.parametrize(("name", "kwargs"), [
    ("Adadelta", {"rho": 1.5}), ("Adadelta", {"lr": -1.0}), ("Adamax", {"betas": (1.0, 0.9)}),
    ("NAdam", {"momentum_decay": -1.0}), ("RAdam", {"eps": -1.0}), ("LBFGS", {"lr": -0.1}),
    ("Rprop", {"etas": (1.5, 2.0)}), ("Rprop", {"lr": -1.0}), ("ASGD", {"weight_decay": -1.0}),
])
def test_invalid_hyperparameters(torch, name, kwargs):
    msgs = []
    for lib in (torch, hookgrad):
        with pytest.raises(ValueError) as e:
            getattr(lib.optim, name)([lib.ones(1, requires_grad=True)], **kwargs)
        msgs.append(str(e.value))
    assert msgs[0] == msgs[1]


_A = np.array([[2.0, 0.5, 0.0, 0.1], [0.5, 1.5, 0.3, 0.0], [0.0, 0.3, 1.0, 0.2],
               [0.1, 0.0, 0.2, 0.8]])


def _lbfgs_run(lib, kwargs, steps):
    w = lib.tensor([-1.5, 2.0, 0.5, 0.3], dtype=lib.float64, requires_grad=True)
    a = lib.tensor(_A)
    b = lib.tensor([1.0, -2.0, 0.5, 3.0], dtype=lib.float64)
    opt = lib.optim.LBFGS([w], **kwargs)
    calls = []

    def closure():
        opt.zero_grad()
        loss = ((a @ w - b) ** 2).sum() + 0.1 * (w**4).sum()  # convex, well conditioned
        loss.backward()
        calls.append(w.detach().numpy().copy())
        return loss

    out = []
    for _ in range(steps):
        loss = opt.step(closure)
        out.append((float(loss.detach()), w.detach().numpy().copy()))
    return out, calls, opt


@pytest.mark.parametrize("kwargs", [{}, {"line_search_fn": "strong_wolfe"},
                                    {"history_size": 3, "max_iter": 7, "lr": 0.5},
                                    {"line_search_fn": "strong_wolfe", "history_size": 2}])
def test_lbfgs_matches_torch(torch, kwargs):
    mine, my_calls, my_opt = _lbfgs_run(hookgrad, kwargs, 4)
    theirs, their_calls, their_opt = _lbfgs_run(torch, kwargs, 4)
    assert len(my_calls) == len(their_calls)
    for a, b in zip(my_calls, their_calls):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)
    for (la, wa), (lb, wb) in zip(mine, theirs):
        assert la == pytest.approx(lb, rel=1e-6, abs=1e-12)
        np.testing.assert_allclose(wa, wb, rtol=1e-10, atol=1e-12)
    ms, ts = my_opt.state_dict()["state"][0], their_opt.state_dict()["state"][0]
    assert list(ms) == list(ts)
    assert ms["func_evals"] == ts["func_evals"] and ms["n_iter"] == ts["n_iter"]
    assert len(ms["old_dirs"]) == len(ts["old_dirs"])
    np.testing.assert_allclose(ms["d"].numpy(), ts["d"].numpy(), rtol=1e-5, atol=1e-9)


def test_lbfgs_rejects_groups_and_unknown_line_search(torch):
    for lib in (torch, hookgrad):
        a, b = lib.ones(1, requires_grad=True), lib.ones(1, requires_grad=True)
        with pytest.raises(ValueError, match="per-parameter options"):
            lib.optim.LBFGS([{"params": [a]}, {"params": [b]}])
        opt = lib.optim.LBFGS([a], line_search_fn="armijo")

        def closure():
            opt.zero_grad()
            loss = (a * a).sum()
            loss.backward()
            return loss

        with pytest.raises(RuntimeError, match="only 'strong_wolfe' is supported"):
            opt.step(closure)
