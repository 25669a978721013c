"""``foreach=`` and ``fused=`` against the oracle: each flag's results equal PyTorch's same flag.

PyTorch on CPU runs ``foreach=True`` through its multi-tensor path and ``fused=True`` (Adam,
AdamW, SGD, Adagrad) through its fused CPU kernels; hookgrad's multi-tensor path must give the
same parameters and state, step by step, with every optimizer hook firing as before.
"""

from __future__ import annotations

import numpy as np
import pytest

import hookgrad
from tests.optim.test_optimizers import CASES, SHAPES, TOL, _assert_state_close, _case_id, _Run

EXTRA = [("Adadelta", {}), ("Adadelta", {"lr": 0.5, "rho": 0.8, "weight_decay": 0.1}),
         ("Adamax", {}), ("NAdam", {}), ("RAdam", {})]
FUSED = ("SGD", "Adam", "AdamW", "Adagrad")  # PyTorch's fused CPU kernels


def _compare(torch, name, kwargs, dt, steps=8):
    rng = np.random.default_rng(0)
    init = [rng.standard_normal(s).astype(dt) for s in SHAPES]
    mine, theirs = _Run(hookgrad, name, kwargs, init), _Run(torch, name, kwargs, init)
    for step in range(steps):
        grads = [rng.standard_normal(s).astype(dt) for s in SHAPES]
        if step % 2:
            grads[2] = None  # skipped parameter: its step count falls behind the others'
        mine.step(grads)
        theirs.step(grads)
        for p, q in zip(mine.params, theirs.params, strict=True):
            np.testing.assert_allclose(p.detach().numpy(), q.detach().numpy(), **TOL[dt])
        _assert_state_close(mine.opt.state_dict(), theirs.opt.state_dict(), TOL[dt])


@pytest.mark.oracle
@pytest.mark.parametrize("foreach", [True, False], ids=["foreach", "for-loop"])
@pytest.mark.parametrize("case", CASES + EXTRA, ids=_case_id)
def test_foreach_matches_torch(torch, case, foreach):
    name, kwargs = case
    _compare(torch, name, {**kwargs, "foreach": foreach}, np.float32)


@pytest.mark.oracle
@pytest.mark.parametrize("dt", [np.float32, np.float64], ids=["f32", "f64"])
@pytest.mark.parametrize("case", [c for c in CASES if c[0] in FUSED], ids=_case_id)
def test_fused_matches_torch(torch, case, dt):
    name, kwargs = case
    _compare(torch, name, {**kwargs, "fused": True}, dt)


@pytest.mark.oracle
@pytest.mark.parametrize("flags", [{"foreach": True}, {"fused": True}], ids=["foreach", "fused"])
def test_hooks_fire_as_before(torch, flags):
    def run(lib):
        log = []
        p = lib.ones(3, requires_grad=True)
        opt = lib.optim.AdamW([p], lr=0.1, **flags)
        opt.register_step_pre_hook(lambda o, a, k: log.append(("pre", type(o).__name__)))
        opt.register_step_post_hook(lambda o, a, k: log.append(("post", p.tolist())))
        opt.register_state_dict_post_hook(lambda o, sd: log.append(("sd", sorted(sd))))
        p.grad = lib.full((3,), 0.5)
        opt.step()
        opt.state_dict()
        return log

    mine, theirs = run(hookgrad), run(torch)
    assert [e[0] for e in mine] == [e[0] for e in theirs]
    np.testing.assert_allclose(mine[1][1], theirs[1][1], rtol=1e-6)
    assert mine[0] == theirs[0] and mine[2] == theirs[2]


@pytest.mark.oracle
@pytest.mark.parametrize("name", FUSED)
@pytest.mark.parametrize("flags", [{"foreach": True}, {"differentiable": True}],
                         ids=["foreach", "differentiable"])
def test_fused_conflicts_raise_like_torch(torch, name, flags):
    def run(lib):
        p = lib.ones(2, requires_grad=True)
        try:
            getattr(lib.optim, name)([p], lr=0.1, fused=True, **flags)
        except Exception as e:  # noqa: BLE001 - the exception is the observation
            return type(e).__name__, str(e)
        return None

    assert run(hookgrad) == run(torch) is not None


@pytest.mark.oracle
@pytest.mark.parametrize("name", ["Adadelta", "RMSprop", "Adamax", "NAdam", "RAdam"])
def test_no_fused_argument_where_torch_has_none(torch, name):
    for lib in (hookgrad, torch):
        with pytest.raises(TypeError, match="fused"):
            getattr(lib.optim, name)([lib.ones(2, requires_grad=True)], fused=True)
