"""Oracle tests of the gamma-family, inverse-error and Bessel functions (torch and torch.special)."""

from __future__ import annotations

import numpy as np
import pytest

import hookgrad
from tests.census._both import run_both, same

pytestmark = pytest.mark.oracle
POS = np.array([0.3, 1.0, 2.5, 7.0])
SYM = np.array([-2.5, -0.5, 0.0, 0.7, 3.0])
UNIT = np.array([-0.9, -0.2, 0.0, 0.5, 0.95])

CASES = {
    "lgamma": (lambda L, t: L.lgamma(t[0]), SYM[SYM != 0]),
    "digamma": (lambda L, t: L.digamma(t[0]), POS),
    "polygamma1": (lambda L, t: L.polygamma(1, t[0]), POS),
    "polygamma3": (lambda L, t: L.special.polygamma(3, t[0]), POS),
    "erfinv": (lambda L, t: L.erfinv(t[0]), UNIT),
    "i0": (lambda L, t: L.i0(t[0]), SYM),
    "mvlgamma": (lambda L, t: L.mvlgamma(t[0], 3), POS + 1.5),
    "gammaln": (lambda L, t: L.special.gammaln(t[0]), POS),
    "psi": (lambda L, t: L.special.psi(t[0]), POS),
    "multigammaln": (lambda L, t: L.special.multigammaln(t[0], 2), POS + 1),
    "ndtri": (lambda L, t: L.special.ndtri(t[0]), np.array([0.01, 0.3, 0.5, 0.99])),
    "erfcx": (lambda L, t: L.special.erfcx(t[0]), SYM),
    "i0e": (lambda L, t: L.special.i0e(t[0]), SYM),
    "i1": (lambda L, t: L.special.i1(t[0]), SYM),
    "i1e": (lambda L, t: L.special.i1e(t[0]), SYM),
    "mvlgamma_below_domain": (lambda L, t: L.mvlgamma(t[0].detach(), 4), np.array([1.0, 2.0])),
    "float32": (lambda L, t: L.digamma(t[0].float()), POS),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_special_matches_pytorch(torch, name):
    fn, *arrays = CASES[name]
    run_both(torch, fn, *arrays)


def test_integer_inputs_and_poles(torch):
    def run(L):
        x = L.tensor([0, 1, 2, 5])
        outs = [L.lgamma(x), L.digamma(x), L.erfinv(L.tensor([0, 1])), L.i0(x),
                L.special.i1(x), L.polygamma(1, x)]
        return [(o.tolist(), str(o.dtype).split(".")[-1]) for o in outs]
    h, t = run(hookgrad), run(torch)
    for (hv, hd), (tv, td) in zip(h, t):
        assert hd == td and np.allclose(hv, tv, equal_nan=True, rtol=1e-6), (hv, tv)


def test_errors(torch):
    for lib in (hookgrad, torch):
        x = lib.tensor([1.0, 2.0])
        for f in (lambda: lib.polygamma(-1, x), lambda: lib.mvlgamma(x, 0)):
            with pytest.raises(RuntimeError):
                f()


def test_vmap_and_grad_of_grad(torch):
    x = np.array([0.7, 1.3, 2.0])
    h = hookgrad.func.vmap(hookgrad.func.grad(lambda v: hookgrad.lgamma(v)))(hookgrad.tensor(x))
    t = torch.func.vmap(torch.func.grad(lambda v: torch.lgamma(v)))(torch.tensor(x))
    assert same(h, t)


PLAIN = ["bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "modified_bessel_i0",
         "modified_bessel_i1", "modified_bessel_k0", "modified_bessel_k1",
         "scaled_modified_bessel_k0", "scaled_modified_bessel_k1", "spherical_bessel_j0",
         "airy_ai"]


@pytest.mark.parametrize("name", PLAIN)
def test_functions_without_derivative(torch, name):
    x = np.array([-1.5, 0.0, 0.3, 2.0, 9.0])
    h = getattr(hookgrad.special, name)(hookgrad.tensor(x, requires_grad=True))
    t = getattr(torch.special, name)(torch.tensor(x, requires_grad=True))
    assert same(h, t, 1e-6) and str(h.dtype) == str(t.dtype)
    assert h.requires_grad == t.requires_grad and h.grad_fn is None
    h32 = getattr(hookgrad.special, name)(hookgrad.tensor([1, 2]))
    t32 = getattr(torch.special, name)(torch.tensor([1, 2]))
    assert same(h32, t32, 1e-5) and str(h32.dtype) == str(t32.dtype)
