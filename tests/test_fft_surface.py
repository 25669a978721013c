"""``torch.fft`` on hookgrad against PyTorch: frequencies and shifts match; the complex
transforms exist and raise RuntimeError (hookgrad has no complex tensors)."""

from __future__ import annotations

import numpy as np
import pytest

import hookgrad


@pytest.mark.parametrize("n", [0, 1, 2, 5, 8])
@pytest.mark.parametrize("d", [1.0, 0.5, 3])
def test_frequencies_equal_torch(torch, n, d):
    for name in ("fftfreq", "rfftfreq"):
        ours, theirs = getattr(hookgrad.fft, name)(n, d), getattr(torch.fft, name)(n, d)
        assert str(ours.dtype) == str(theirs.dtype) and ours.shape == tuple(theirs.shape)
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-6)
    ours = hookgrad.fft.fftfreq(n, d, dtype=hookgrad.float64, requires_grad=True)
    theirs = torch.fft.fftfreq(n, d, dtype=torch.float64, requires_grad=True)
    assert ours.requires_grad and theirs.requires_grad
    np.testing.assert_array_equal(ours.detach().numpy(), theirs.detach().numpy())


def test_frequency_errors_as_torch(torch):
    for lib in (hookgrad, torch):
        with pytest.raises(RuntimeError, match="floating point"):
            lib.fft.fftfreq(5, dtype=lib.int64)
        with pytest.raises(RuntimeError, match="negative dimension"):
            lib.fft.fftfreq(-1)


@pytest.mark.parametrize("dim", [None, 0, 1, (0, 1), (-1,)])
def test_shifts_values_and_grads_equal_torch(torch, dim):
    data = np.arange(30.0).reshape(5, 6)
    for fn in ("fftshift", "ifftshift"):
        x, tx = hookgrad.tensor(data, requires_grad=True), torch.tensor(data, requires_grad=True)
        y, ty = getattr(hookgrad.fft, fn)(x, dim=dim), getattr(torch.fft, fn)(tx, dim=dim)
        np.testing.assert_array_equal(y.detach().numpy(), ty.detach().numpy())
        assert type(y.grad_fn).__name__ == type(ty.grad_fn).__name__
        w = np.random.default_rng(0).normal(size=(5, 6))
        (y * hookgrad.tensor(w)).sum().backward()
        (ty * torch.tensor(w)).sum().backward()
        np.testing.assert_array_equal(x.grad.numpy(), tx.grad.numpy())


def test_transforms_are_implemented_and_nd_hermitian_ones_raise():
    x = hookgrad.ones(4, 4)
    for name in ("fft", "ifft", "rfft", "irfft", "fft2", "rfftn", "hfft", "ihfft"):
        fn = getattr(hookgrad.fft, name)
        assert not hasattr(fn, "__hookgrad_unsupported__")
        assert fn(x).shape[0] == 4  # values: tests/dtypes/test_fft.py compares with torch
    for name in ("hfft2", "ihfft2", "hfftn", "ihfftn"):
        fn = getattr(hookgrad.fft, name)
        assert "not implemented" in fn.__hookgrad_unsupported__
        with pytest.raises(RuntimeError, match="not implemented"):
            fn(x)


def test_subclasses_reachable_after_plain_import():
    """``torch._subclasses.fake_tensor`` is an attribute chain after ``import torch`` alone
    (transformers reads it so); checked in a fresh process, for both libraries."""
    import subprocess
    import sys

    code = "import {0}; print({0}._subclasses.fake_tensor.is_fake({0}.ones(1)))"
    for lib in ("hookgrad", "torch"):
        out = subprocess.run([sys.executable, "-c", code.format(lib)], capture_output=True,
                             text=True, timeout=120)
        assert out.stdout.strip() == "False", (lib, out.stderr[-500:])
