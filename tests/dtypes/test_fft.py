"""torch.fft transforms against PyTorch: values, dtypes, node names and gradients."""

from __future__ import annotations

import numpy as np
import pytest

import hookgrad
from tests.dtypes._compare import same

RNG = np.random.default_rng(5)
REAL = RNG.standard_normal((3, 8))
CPLX = RNG.standard_normal((3, 8)) + 1j * RNG.standard_normal((3, 8))
WEIGHT = RNG.standard_normal((3, 8)) + 1j * RNG.standard_normal((3, 8))

CALLS = {
    "fft": lambda f, x: f.fft(x), "fft_n_pad": lambda f, x: f.fft(x, n=11),
    "fft_n_crop": lambda f, x: f.fft(x, n=5, dim=0), "ifft": lambda f, x: f.ifft(x),
    "fft_ortho": lambda f, x: f.fft(x, norm="ortho"), "ifft_forward": lambda f, x:
    f.ifft(x, norm="forward"), "fft2": lambda f, x: f.fft2(x), "ifft2": lambda f, x: f.ifft2(x),
    "fftn": lambda f, x: f.fftn(x, s=(4, 6)), "ifftn": lambda f, x: f.ifftn(x, dim=(0,)),
    "rfft": lambda f, x: f.rfft(x.real), "rfft_odd": lambda f, x: f.rfft(x.real, n=7),
    "rfft2": lambda f, x: f.rfft2(x.real), "rfftn_ortho": lambda f, x:
    f.rfftn(x.real, norm="ortho"), "irfft": lambda f, x: f.irfft(x),
    "irfft_n": lambda f, x: f.irfft(x, n=9), "irfft2": lambda f, x: f.irfft2(x),
    "irfftn_s": lambda f, x: f.irfftn(x, s=(3, 6), norm="forward"),
    "hfft": lambda f, x: f.hfft(x), "ihfft": lambda f, x: f.ihfft(x.real),
    "fft_of_real": lambda f, x: f.fft(x.real), "ifft_of_real": lambda f, x: f.ifft(x.real),
}


def _scenario(lib, name, dtype):
    x = lib.tensor(CPLX, dtype=getattr(lib, dtype), requires_grad=True)
    y = CALLS[name](lib.fft, x)
    w = lib.tensor(WEIGHT, dtype=getattr(lib, dtype))
    w = w[: y.shape[0], : y.shape[1]] if y.dim() == 2 and y.shape[0] <= 3 and y.shape[1] <= 8 \
        else lib.ones(y.shape, dtype=y.dtype)
    loss = (y * w).abs().sum() if y.is_complex() else (y * w.real).sum()
    loss.backward()
    return y, type(y.grad_fn).__name__, x.grad


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
@pytest.mark.parametrize("name", sorted(CALLS))
def test_transform_matches_torch(torch, name, dtype):
    same(torch, lambda lib: _scenario(lib, name, dtype))


def test_integer_input_and_bad_norm_match_torch(torch):
    same(torch, lambda lib: lib.fft.fft(lib.arange(4)))
    same(torch, lambda lib: lib.fft.rfft(lib.arange(6)))
    same(torch, lambda lib: lib.fft.fft(lib.ones(4), norm="bad"))
    same(torch, lambda lib: lib.fft.rfft(lib.ones(4, dtype=lib.complex64)))


def test_gradcheck_and_gradgradcheck_through_transforms():
    def fn(a):
        z = hookgrad.fft.rfft(a)
        return hookgrad.fft.irfft(z * z, n=a.shape[-1]) + hookgrad.view_as_real(
            hookgrad.fft.ifft(hookgrad.fft.fft(a, norm="ortho") ** 2)).sum(-1)

    a = hookgrad.tensor(REAL[:, :7], requires_grad=True)
    assert hookgrad.autograd.gradcheck(fn, (a,))
    assert hookgrad.autograd.gradgradcheck(fn, (a,))
