"""torch.signal.windows against PyTorch: every window, lengths 0..8, symmetric and periodic,
float32 and float64, and the argument errors."""

from __future__ import annotations

import numpy as np
import pytest

import hookgrad
from tests._errors import err

NAMES = ["bartlett", "blackman", "cosine", "exponential", "gaussian", "hamming", "hann",
         "kaiser", "nuttall"]


@pytest.mark.oracle
@pytest.mark.parametrize("name", NAMES)
def test_windows_match_torch(torch, name):
    for M in (0, 1, 2, 5, 8):
        for sym in (True, False):
            for dt, tol in (("float32", 1e-6), ("float64", 1e-12)):
                a = getattr(hookgrad.signal.windows, name)(M, sym=sym,
                                                           dtype=getattr(hookgrad, dt))
                b = getattr(torch.signal.windows, name)(M, sym=sym, dtype=getattr(torch, dt))
                assert str(a.dtype).split(".")[-1] == str(b.dtype).split(".")[-1]
                assert tuple(a.shape) == tuple(b.shape)
                np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=tol, atol=tol)


EXTRA = {
    "general_cosine": lambda lib: lib.signal.windows.general_cosine(
        7, a=[0.4, 0.35, 0.25], sym=False),
    "general_hamming": lambda lib: lib.signal.windows.general_hamming(6, alpha=0.6),
    "gaussian_std": lambda lib: lib.signal.windows.gaussian(7, std=2.5),
    "exponential_center": lambda lib: lib.signal.windows.exponential(6, center=1.5, tau=2.0,
                                                                     sym=False),
    "kaiser_beta": lambda lib: lib.signal.windows.kaiser(9, beta=4.0, dtype=lib.float64),
    "default_dtype_grad": lambda lib: lib.signal.windows.hann(4, requires_grad=True),
}


@pytest.mark.oracle
@pytest.mark.parametrize("name", sorted(EXTRA))
def test_parameters_match_torch(torch, name):
    a, b = EXTRA[name](hookgrad), EXTRA[name](torch)
    assert a.requires_grad == b.requires_grad and str(a.dtype)[-7:] == str(b.dtype)[-7:]
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-6, atol=1e-7)


BAD = {
    "negative": lambda lib: lib.signal.windows.hann(-1),
    "int_dtype": lambda lib: lib.signal.windows.bartlett(3, dtype=lib.int64),
    "std": lambda lib: lib.signal.windows.gaussian(3, std=0.0),
    "tau": lambda lib: lib.signal.windows.exponential(3, tau=-1.0),
    "center_sym": lambda lib: lib.signal.windows.exponential(3, center=1.0),
    "beta": lambda lib: lib.signal.windows.kaiser(3, beta=-1.0),
    "coefficients": lambda lib: lib.signal.windows.general_cosine(3, a=[]),
    "coefficients_type": lambda lib: lib.signal.windows.general_cosine(3, a=1.0),
}


@pytest.mark.oracle
@pytest.mark.parametrize("name", sorted(BAD))
def test_errors_match_torch(torch, name):
    mine, theirs = err(lambda: BAD[name](hookgrad)), err(lambda: BAD[name](torch))
    assert theirs is not None and mine is not None and mine[0] == theirs[0], (mine, theirs)
