"""GELU (erf form) on float32 takes hookgrad's float32 erf (``tanh`` of a polynomial,
`_ops/_erf32.py`): values and gradients as PyTorch's, on every layout and edge value."""

from __future__ import annotations

import numpy as np
import pytest


def _gelu_and_grad(lib, arr, make):
    x = make(lib.tensor(arr)).requires_grad_(True)
    y = lib.nn.functional.gelu(x)
    y.backward(lib.ones_like(y) * 0.5)
    return y.detach().numpy(), x.grad.numpy()


LAYOUTS = {
    "contiguous": (np.linspace(-9, 9, 4001, dtype=np.float32).reshape(1, -1), lambda t: t),
    "transposed": (np.random.default_rng(0).normal(size=(6, 5)).astype(np.float32) * 3,
                   lambda t: t.t()),
    "zero-d": (np.array(0.7, dtype=np.float32), lambda t: t),
    "empty": (np.zeros((0, 3), dtype=np.float32), lambda t: t),
    "edges": (np.array([np.nan, -0.0, 1e-30, -1e-30, 30.0, -30.0], dtype=np.float32),
              lambda t: t),
}


@pytest.mark.oracle
@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_gelu_float32_matches_torch(torch, layout):
    import hookgrad

    arr, make = LAYOUTS[layout]
    mine = _gelu_and_grad(hookgrad, arr, make)
    theirs = _gelu_and_grad(torch, arr, make)
    for a, b in zip(mine, theirs, strict=True):
        assert a.shape == b.shape and a.dtype == b.dtype
        # the float32 erf is within ~2 ulp of 1 where |x| > 4.8: gelu = x * (1 + erf) / 2
        # then differs by at most |x| * 1.2e-7 from PyTorch's (which rounds erf to -1 there)
        np.testing.assert_allclose(a, b, rtol=2e-6, atol=1e-6)
