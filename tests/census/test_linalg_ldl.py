"""``linalg.ldl_factor``/``ldl_factor_ex``/``ldl_solve``: LAPACK's Bunch-Kaufman pivots, factors
and solutions equal PyTorch's; nodes, errors and ``info`` as PyTorch's."""

from __future__ import annotations

import numpy as np
import pytest

import hookgrad
from tests.census._both import error_of

pytestmark = pytest.mark.oracle


def _error(fn):
    return error_of(fn, lambda m: m[-30:])




def _symmetric(seed):
    r = np.random.RandomState(seed)
    n = r.randint(1, 9)
    a = r.randn(n, n)
    a = a + a.T
    if seed % 3 == 0:  # small diagonals force 2x2 pivots and row interchanges
        a[np.diag_indices(n)] *= 0.01
    return a, r.randn(n, 3)


@pytest.mark.parametrize("seed", range(60))
def test_factors_pivots_and_solutions_equal_pytorch(torch, seed):
    a, b = _symmetric(seed)
    t = torch.linalg.ldl_factor(torch.tensor(a))
    h = hookgrad.linalg.ldl_factor(hookgrad.tensor(a))
    assert h.pivots.tolist() == t.pivots.tolist()
    np.testing.assert_allclose(np.array(h.LD.tolist()), t.LD.numpy(), rtol=1e-9, atol=1e-9)
    xt = torch.linalg.ldl_solve(t.LD, t.pivots, torch.tensor(b))
    xh = hookgrad.linalg.ldl_solve(h.LD, h.pivots, hookgrad.tensor(b))
    np.testing.assert_allclose(np.array(xh.tolist()), xt.numpy(), rtol=1e-8, atol=1e-8)


def test_nodes_errors_and_info_follow_pytorch(torch):
    def scenario(L):
        A = L.tensor([[4.0, 1.0, 2.0], [1.0, -3.0, 0.5], [2.0, 0.5, 5.0]], requires_grad=True)
        LD, piv = L.linalg.ldl_factor(A)
        ex = L.linalg.ldl_factor_ex(A)
        B = L.ones(3, 2, requires_grad=True)
        X = L.linalg.ldl_solve(LD, piv, B)
        zero = L.linalg.ldl_factor_ex(L.zeros(3, 3))
        return (type(LD.grad_fn).__name__, LD.requires_grad, str(piv.dtype), str(ex.info.dtype),
                ex.info.item(), type(X.grad_fn).__name__, _error(lambda: LD.sum().backward()),
                _error(lambda: X.sum().backward()), zero.info.item(), zero.pivots.tolist(),
                zero.LD.tolist(), _error(lambda: L.linalg.ldl_factor(L.zeros(3, 3))),
                _error(lambda: L.linalg.ldl_factor_ex(L.zeros(3, 3), check_errors=True)),
                _error(lambda: L.linalg.ldl_factor(L.zeros(3, 4))),
                _error(lambda: L.linalg.ldl_factor(L.zeros(3))),
                _error(lambda: L.linalg.ldl_factor(L.zeros(3, 3, dtype=L.long))),
                _error(lambda: L.linalg.ldl_solve(LD, piv, L.ones(2, 2))),
                tuple(L.linalg.ldl_factor(L.ones(2, 3, 3) + L.eye(3)).LD.shape),
                type(ex).__name__, tuple(L.linalg.ldl_solve(LD.detach(), piv,
                                                            L.ones(4, 3, 1)).shape))
    assert scenario(hookgrad) == scenario(torch)
