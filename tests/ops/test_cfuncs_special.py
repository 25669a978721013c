"""torch.special's orthogonal polynomials and Hurwitz zeta against PyTorch."""

from __future__ import annotations

import numpy as np
import pytest

import hookgrad
from tests._errors import err

NAMES = ["chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v",
         "chebyshev_polynomial_w", "shifted_chebyshev_polynomial_t",
         "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v",
         "shifted_chebyshev_polynomial_w", "hermite_polynomial_h", "hermite_polynomial_he",
         "laguerre_polynomial_l", "legendre_polynomial_p"]
X = [-1.0, -0.999, -0.5, 0.0, 0.3, 0.5, 0.7, 1.0, 1.5, -2.2, 0.99]
DEGREES = [-1, 0, 1, 2, 3, 5, 7, 9, 12, 20]


@pytest.mark.oracle
@pytest.mark.parametrize("name", NAMES)
def test_polynomials_match_torch(torch, name):
    for lib_x, lib_n in [(np.array(X), np.array(DEGREES)[:, None])]:
        a = getattr(hookgrad.special, name)(hookgrad.tensor(lib_x), hookgrad.tensor(lib_n))
        b = getattr(torch.special, name)(torch.tensor(lib_x), torch.tensor(lib_n))
        assert a.dtype == hookgrad.float64 and tuple(a.shape) == tuple(b.shape)
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-9, atol=1e-9)
    # scalar degree (truncated), int input (default dtype), float32, no graph
    for args in [(lambda l: l.tensor([0.5, 0.2]), 2.7), (lambda l: l.tensor([1, 2]), 3),
                 (lambda l: l.tensor([0.3, -0.4], requires_grad=True), 4)]:
        a = getattr(hookgrad.special, name)(args[0](hookgrad), args[1])
        b = getattr(torch.special, name)(args[0](torch), args[1])
        assert str(a.dtype).split(".")[-1] == str(b.dtype).split(".")[-1]
        assert a.requires_grad == b.requires_grad
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-5)


def test_zeta_matches_torch(torch):
    x = [2.0, 1.0, 0.5, 3.0, 3.0, 2.5, 4.5, 1.01, 30.0, 2.0]
    q = [1.0, 1.0, 1.0, -2.0, -2.5, -2.5, 0.3, 2.0, 0.9, 1e4]
    a = hookgrad.special.zeta(hookgrad.tensor(x, dtype=hookgrad.float64),
                              hookgrad.tensor(q, dtype=hookgrad.float64))
    b = torch.special.zeta(torch.tensor(x, dtype=torch.float64), torch.tensor(q,
                                                                              dtype=torch.float64))
    np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-13)
    a = hookgrad.special.zeta(2.0, hookgrad.tensor([1.0, 2.0]))
    b = torch.special.zeta(2.0, torch.tensor([1.0, 2.0]))
    assert a.dtype == hookgrad.float32
    np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-6)


def test_zeta_gradients_match_torch(torch):
    def run(lib):
        s = lib.tensor([[2.0], [3.5]], dtype=lib.float64)
        q = lib.tensor([0.5, 1.5, 4.0], dtype=lib.float64, requires_grad=True)
        out = lib.special.zeta(s, q)
        (g,) = lib.autograd.grad((out * out).sum(), (q,))
        return out.grad_fn.name(), g.tolist()

    mine, theirs = run(hookgrad), run(torch)
    assert mine[0] == theirs[0]
    np.testing.assert_allclose(mine[1], theirs[1], rtol=1e-12)
    s = hookgrad.tensor([2.0, 3.0], dtype=hookgrad.float64)
    q = hookgrad.tensor([0.7, 1.3], dtype=hookgrad.float64, requires_grad=True)
    assert hookgrad.autograd.gradcheck(lambda q: hookgrad.special.zeta(s, q), (q,))


@pytest.mark.oracle
def test_zeta_self_gradient_raises_like_torch(torch):
    def run(lib):
        s = lib.tensor([2.0], requires_grad=True)
        return lib.special.zeta(s, lib.tensor([1.0])).sum().backward()

    mine, theirs = err(lambda: run(hookgrad)), err(lambda: run(torch))
    assert mine == theirs
