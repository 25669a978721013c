"""``optim.Adafactor`` against PyTorch over several steps: matrices (factored second moments),
vectors, 3-d tensors, weight decay, maximize, ``eps1`` given or the dtype's epsilon, ``d``
clipping, state_dict contents and argument errors."""

from __future__ import annotations

import numpy as np
import pytest

import hookgrad
from tests._errors import err
from tests.nn._compare import to_lib


def _run(lib, arrays, grads, steps, dtype, **kw):
    params = [to_lib(lib, a.astype(dtype), True) for a in arrays]
    opt = lib.optim.Adafactor(params, **kw)
    for k in range(steps):
        for p, g in zip(params, grads):
            p.grad = to_lib(lib, (g * (1 + 0.3 * k) + p.detach().numpy() * 0.1).astype(dtype))
        opt.step()
    return params, opt


@pytest.mark.parametrize("kw", [{}, {"lr": 0.5, "weight_decay": 0.1},
                                {"maximize": True, "eps": (1e-30, 1e-2), "d": 1.5},
                                {"beta2_decay": -0.5, "lr": 0.05, "d": 3.0}])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_matches_torch(torch, kw, dtype):
    rng = np.random.default_rng(0)
    shapes = [(4, 5), (6,), (2, 3, 4), (1, 3)]
    arrays = [rng.standard_normal(s) for s in shapes]
    grads = [rng.standard_normal(s) for s in shapes]
    tp, topt = _run(torch, arrays, grads, 6, dtype, **kw)
    hp, hopt = _run(hookgrad, arrays, grads, 6, dtype, **kw)
    tol = 1e-10 if dtype == "float64" else 2e-5
    for a, b in zip(tp, hp):
        np.testing.assert_allclose(b.detach().numpy(), a.detach().numpy(), rtol=tol, atol=tol)
    ts, hs = topt.state_dict(), hopt.state_dict()
    assert ts["param_groups"] == hs["param_groups"]
    for i in ts["state"]:
        assert sorted(ts["state"][i]) == sorted(hs["state"][i])
        for key, value in ts["state"][i].items():
            h = hs["state"][i][key]
            assert tuple(h.shape) == tuple(value.shape) and str(h.dtype) == str(value.dtype)
            np.testing.assert_allclose(h.numpy(), value.numpy(), rtol=tol, atol=1e-12)


def test_errors_match_torch(torch):
    for kw in ({"lr": -1}, {"beta2_decay": 0.5}, {"eps": (-1, 1e-3)}, {"eps": (None, -1)},
               {"d": 0.5}, {"weight_decay": -1}):
        assert err(lambda: hookgrad.optim.Adafactor([hookgrad.zeros(2, requires_grad=True)],
                                                    **kw)) == err(
            lambda: torch.optim.Adafactor([torch.zeros(2, requires_grad=True)], **kw))
