"""``linalg_solve_triangular``: ``X`` with ``A X = B`` (or ``X A = B``) for triangular ``A``.

Only `A`'s triangle (given by `upper`) is read, its diagonal taken as ones when
`unitriangular`, as LAPACK's ``trsm`` does. The rule is PyTorch's: with ``M = A^-H``,
``grad_B = solve_triangular(A^H, grad, ...)`` and ``grad_A = -(grad_B X^H)`` restricted to the
triangle (strictly, for unit diagonals); the mirror formulas for ``left=False``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from hookgrad._backend import namespace_of
from hookgrad._dispatch import bind
from hookgrad._ops.registry import defop
from hookgrad._tensor import Tensor

__all__ = ["SOLVE_TRIANGULAR"]


def _triangle(a: Any, upper: bool, unitriangular: bool) -> Any:
    xp = namespace_of(a)
    t = xp.triu(a) if upper else xp.tril(a)
    if unitriangular:
        n = a.shape[-1]
        t = t.copy()
        idx = xp.arange(n)
        t[..., idx, idx] = 1
    return t


def _solve(a: Any, b: Any) -> Any:
    xp = namespace_of(a)
    try:
        return xp.linalg.solve(a, b)
    except np.linalg.LinAlgError:  # a zero on the diagonal: trsm divides by it (inf/nan)
        with np.errstate(all="ignore"):
            inv = 1.0 / xp.zeros(1, a.dtype)[0]
        return xp.full(np.broadcast_shapes(a.shape[:-2], b.shape[:-2]) + b.shape[-2:], inv,
                       dtype=np.result_type(a, b))


def _impl(A: Any, B: Any, upper: bool, left: bool = True,
          unitriangular: bool = False) -> Any:
    tri = _triangle(A, upper, unitriangular)
    if left:
        return _solve(tri, B)
    # X A = B  <=>  A^T X^T = B^T
    return _solve(tri.swapaxes(-1, -2), B.swapaxes(-1, -2)).swapaxes(-1, -2)


def _mask(g: Tensor, upper: bool, unitriangular: bool) -> Tensor:
    if unitriangular:
        return g.triu(1) if upper else g.tril(-1)
    return g.triu() if upper else g.tril()


def _grad_b(grad: Tensor, A: Tensor, upper: bool, left: bool, unitriangular: bool) -> Tensor:
    # solve with A^T: upper becomes lower, and the side stays
    return bind(SOLVE_TRIANGULAR, (A.mT, grad), {"upper": not upper, "left": left,
                                                 "unitriangular": unitriangular})


def _grad_a(grad: Tensor, A: Tensor, result: Tensor, upper: bool, left: bool,
            unitriangular: bool) -> Tensor:
    gb = _grad_b(grad, A, upper, left, unitriangular)
    ga = -(gb @ result.mT) if left else -(result.mT @ gb)
    return _mask(ga, upper, unitriangular)


def _solve_with(A: Tensor, rhs: Tensor, upper: bool, left: bool, unitriangular: bool) -> Tensor:
    return bind(SOLVE_TRIANGULAR, (A, rhs), {"upper": upper, "left": left,
                                             "unitriangular": unitriangular})


def _tangent_a(t: Tensor, A: Tensor, result: Tensor, upper: bool, left: bool,
               unitriangular: bool) -> Tensor:
    # dX = -A^-1 dA X (left) or -X dA A^-1 (right), dA read on the triangle only
    dt = _mask(t, upper, unitriangular)
    rhs = -(dt @ result) if left else -(result @ dt)
    return _solve_with(A, rhs, upper, left, unitriangular)


SOLVE_TRIANGULAR = defop(
    "linalg_solve_triangular",
    impl=_impl,
    inputs=("A", "B"),
    params=("upper", "left", "unitriangular"),
    saves=("A", "result"),
    node_name="LinalgSolveTriangularBackward0",
    vjp={"A": _grad_a, "B": lambda grad, A, upper, left, unitriangular: _grad_b(
        grad, A, upper, left, unitriangular)},
    jvp={"A": _tangent_a, "B": lambda t, A, upper, left, unitriangular: _solve_with(
        A, t, upper, left, unitriangular)},
)
