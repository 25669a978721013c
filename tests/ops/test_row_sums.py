"""Row sums through BLAS (NOTE [Row sums through BLAS]) and the kernels that use them, against
NumPy's ``sum`` and against PyTorch at the shapes of the bench models; and nll_loss's array
backward, whose unpicked entries are +0.0 as PyTorch's kernel leaves them."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import hookgrad
from hookgrad._ops._rowsum import row_sum

RNG = np.random.default_rng(7)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(700, 1000), (12, 4, 64, 64), (768, 128), (5,), (3, 1)])
def test_row_sum_matches_numpy_sum(shape, dtype):
    a = RNG.standard_normal(shape).astype(dtype)
    got = row_sum(a, -1)
    want = a.sum(axis=-1, keepdims=True)
    assert got.shape == want.shape and got.dtype == want.dtype
    tol = 1e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol * shape[-1])
    np.testing.assert_allclose(row_sum(a, a.ndim - 1), want, rtol=tol, atol=tol * shape[-1])


@pytest.mark.parametrize("case", ["transposed", "other_axis", "float16", "int", "empty", "0-d"])
def test_row_sum_falls_back_to_sum_exactly(case):
    a = RNG.standard_normal((6, 9)).astype(np.float32)
    axis = -1
    if case == "transposed":
        a = a.T
    elif case == "other_axis":
        axis = 0
    elif case == "float16":
        a = a.astype(np.float16)
    elif case == "int":
        a = (a * 10).astype(np.int64)
    elif case == "empty":
        a = a[:, :0]
    else:
        a, axis = np.asarray(np.float32(2.5)), None
    want = a.sum(axis=axis, keepdims=True)
    got = row_sum(a, axis)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got, want)


def test_row_sum_special_values():
    a = np.array([[np.inf, 1.0, 2.0], [np.nan, 0.0, 1.0], [np.inf, -np.inf, 0.0],
                  [-0.0, -0.0, -0.0]], np.float32)
    with np.errstate(invalid="ignore"):  # inf - inf warns, as NumPy's sum does
        got = row_sum(a, -1)[:, 0]
    assert got[0] == np.inf and np.isnan(got[1]) and np.isnan(got[2])
    assert got[3] == 0.0


def _both(fn, shape, dim):
    x0 = RNG.standard_normal(shape).astype(np.float32) * 3
    g0 = RNG.standard_normal(shape).astype(np.float32)
    out = []
    for lib in (torch, hookgrad):
        x = lib.tensor(x0, requires_grad=True)
        y = fn(lib)(x, dim=dim)
        (gx,) = lib.autograd.grad(y, [x], lib.tensor(g0))
        out.append((y.detach().numpy(), gx.numpy()))
    return out


@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
@pytest.mark.parametrize(("shape", "dim"), [((700, 1000), 1), ((12, 4, 64, 64), -1),
                                            ((8, 33), 0), ((4, 5, 6), 1)])
def test_softmax_family_matches_pytorch(name, shape, dim):
    (ty, tg), (hy, hg) = _both(lambda lib: getattr(lib.nn.functional, name), shape, dim)
    np.testing.assert_allclose(hy, ty, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(hg, tg, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("shape", [(768, 128), (2, 3, 16)])
def test_layer_norm_matches_pytorch(shape):
    x0 = RNG.standard_normal(shape).astype(np.float32)
    g0 = RNG.standard_normal(shape).astype(np.float32)
    out = []
    for lib in (torch, hookgrad):
        ln = lib.nn.LayerNorm(shape[-1])
        x = lib.tensor(x0, requires_grad=True)
        y = ln(x)
        gx, gw = lib.autograd.grad(y, [x, ln.weight], lib.tensor(g0))
        out.append([t.detach().numpy() for t in (y, gx, gw)])
    for h, t in zip(out[1], out[0], strict=True):
        np.testing.assert_allclose(h, t, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("reduction", ["mean", "sum"])
def test_nll_loss_backward_zeros_are_positive_as_in_pytorch(reduction):
    """A negative incoming gradient: PyTorch writes only the picked entries; the rest stay +0.0
    (``grad * mask`` would give -0.0 there)."""
    x0 = RNG.standard_normal((6, 5)).astype(np.float32)
    y0 = np.array([1, 0, 4, 2, 2, 3])
    grads = []
    for lib in (torch, hookgrad):
        x = lib.tensor(x0, requires_grad=True)
        loss = lib.nn.functional.nll_loss(x, lib.tensor(y0), reduction=reduction)
        (g,) = lib.autograd.grad(loss * -2.0, [x])
        grads.append(g.numpy())
    np.testing.assert_array_equal(grads[1], grads[0])
    np.testing.assert_array_equal(np.signbit(grads[1]), np.signbit(grads[0]))
