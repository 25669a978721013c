"""Gradients through complex values against PyTorch's (its convention: for a real loss L of
z = x + iy, z.grad = dL/dx + i dL/dy), views sharing memory, and PyTorch's autograd errors."""

from __future__ import annotations

import numpy as np
import pytest

import hookgrad
from tests.dtypes._compare import same

RNG = np.random.default_rng(7)
Z = (RNG.standard_normal(4) + 1j * RNG.standard_normal(4)).astype(np.complex128)
W = (RNG.standard_normal(4) + 1j * RNG.standard_normal(4)).astype(np.complex128)
X = RNG.standard_normal(4)

LOSSES = {
    "abs_mul": lambda l, z, w, x: (z * w).abs().sum(),
    "abs2": lambda l, z, w, x: (z * z.conj()).real.sum(),
    "exp_div": lambda l, z, w, x: (z.exp() / w).real.sum(),
    "log_sqrt": lambda l, z, w, x: (z.log() + w.sqrt()).imag.sum(),
    "trig": lambda l, z, w, x: (z.sin() * w.cos() + z.tanh()).abs().sum(),
    "sigmoid_recip": lambda l, z, w, x: (z.sigmoid() + w.reciprocal()).real.sum(),
    "pow": lambda l, z, w, x: ((z ** 2) * (w ** 0.5) + z ** w).abs().sum(),
    "angle": lambda l, z, w, x: (z * w).angle().sum(),
    "sgn": lambda l, z, w, x: (z.sgn() * w).real.sum(),
    "conj": lambda l, z, w, x: (z.conj() * w).imag.sum(),
    "conj_physical": lambda l, z, w, x: (z.conj_physical() * w).imag.sum(),
    "view_as_real": lambda l, z, w, x: (l.view_as_real(z * w) ** 2).sum(),
    "view_as_complex": lambda l, z, w, x: (l.view_as_complex(
        l.stack([x, x * 2], -1)) * z).abs().sum(),
    "real_times_complex": lambda l, z, w, x: (x * z).abs().sum() + (x + w).real.sum(),
    "polar": lambda l, z, w, x: (l.polar(x.abs() + 0.5, x) * z).real.sum(),
    "complex": lambda l, z, w, x: (l.complex(x, x.sin()) * w).abs().sum(),
    "matmul": lambda l, z, w, x: (z.reshape(2, 2) @ w.reshape(2, 2)).abs().sum(),
    "einsum": lambda l, z, w, x: l.einsum("i,j->ij", z, w).real.sum(),
    "sum_mean_prod": lambda l, z, w, x: (z.sum() * w.mean() + z.prod()).abs(),
    "var": lambda l, z, w, x: z.var() + w.std(),
    "norm": lambda l, z, w, x: l.linalg.norm(z * w),
    "real_imag_setitem": lambda l, z, w, x: (z * 1).real.sum() + (w * 1j).imag.sum(),
    "python_complex": lambda l, z, w, x: ((x * (1 + 2j)) * z).abs().sum(),
}


def _run(lib, name):
    z = lib.tensor(Z, requires_grad=True)
    w = lib.tensor(W, requires_grad=True)
    x = lib.tensor(X, requires_grad=True)
    loss = LOSSES[name](lib, z, w, x)
    loss.backward()
    return loss, z.grad, w.grad, x.grad


@pytest.mark.parametrize("name", sorted(LOSSES))
def test_grads_match_torch(torch, name):
    same(torch, lambda lib: _run(lib, name))


def test_grad_fn_names_match_torch(torch):
    def names(lib):
        z = lib.tensor(Z, requires_grad=True)
        return [type(t.grad_fn).__name__ for t in (
            z.real, z.imag, z.conj(), z.conj_physical(), lib.view_as_real(z), z.abs(),
            z.angle(), z.sgn(), z * z, lib.view_as_complex(lib.view_as_real(z)))]

    assert names(hookgrad) == names(torch)


def test_backward_of_a_complex_scalar_raises(torch):
    same(torch, lambda lib: lib.tensor(Z, requires_grad=True).sum().backward())
    same(torch, lambda lib: lib.tensor(Z, requires_grad=True).sum().backward(
        lib.tensor(1 + 0j, dtype=lib.complex128)))


def test_gradcheck_float64_through_complex():
    def fn(a, b):
        z = hookgrad.complex(a, b)
        return hookgrad.view_as_real((z * z.exp()).sgn() + z.conj() * hookgrad.polar(a, b))

    a = hookgrad.tensor(np.abs(X) + 0.5, requires_grad=True)  # polar: a positive modulus
    b = hookgrad.tensor(X[::-1].copy(), requires_grad=True)
    assert hookgrad.autograd.gradcheck(fn, (a, b))
    assert hookgrad.autograd.gradgradcheck(fn, (a, b))


def test_views_share_memory_and_write_through(torch):
    def scenario(lib):
        z = lib.tensor([1 + 2j, 3 - 4j])
        r = lib.view_as_real(z)
        r[0, 1] = 7.0
        z.real[1] = -1.0
        z.imag.mul_(2)
        c = lib.view_as_complex(lib.arange(4.0).reshape(2, 2))
        c[0] = 5j
        z.real = lib.tensor([0.5, 0.25])
        return z, r, c, z.is_conj(), z.conj().is_conj(), z.conj().conj().is_conj()

    same(torch, scenario)


@pytest.mark.parametrize("bad", range(7))
def test_view_as_complex_checks_match_torch(torch, bad):
    cases = [lambda l: l.ones(2, 3), lambda l: l.ones(2, 2).t(),
             lambda l: l.ones(3, 3)[:, :2], lambda l: l.ones(5)[1:].view(2, 2),
             lambda l: l.ones(2, 2, dtype=l.int64), lambda l: l.ones(()),
             lambda l: l.ones(3, 2)[:, :1].expand(3, 2)]
    same(torch, lambda lib: lib.view_as_complex(cases[bad](lib)))


def test_complex_and_polar_argument_checks_match_torch(torch):
    for fn in (lambda l: l.complex(l.ones(2), l.ones(2, dtype=l.float64)),
               lambda l: l.complex(l.ones(2, dtype=l.int64), l.ones(2, dtype=l.int64)),
               lambda l: l.polar(l.ones(2), l.ones(2, dtype=l.float64)),
               lambda l: l.view_as_real(l.ones(2)), lambda l: l.ones(2).imag):
        same(torch, fn)


@pytest.mark.parametrize("dt", ["cfloat", "cdouble"])
def test_random_complex_streams_match_torch(torch, dt):
    def draws(lib):
        lib.manual_seed(3)
        d = getattr(lib, dt)
        return [lib.randn(5, dtype=d), lib.randn(4, 5, dtype=d), lib.rand(3, dtype=d),
                lib.normal(1.0, 2.0, (20,), dtype=d)]

    same(torch, draws)
