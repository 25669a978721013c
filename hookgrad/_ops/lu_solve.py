"""Solving with an LU factorisation: ``op(A) X = B`` or ``X op(A) = B`` with ``A = P L U``.

Mirrors: ``torch.linalg.lu_solve`` (node ``LinalgLuSolveBackward0``). With ``gB`` the solve of
the output gradient against the transposed system, the gradient of A is ``-gB X^T``
(left), ``-X gB^T`` (left, adjoint), ``-X^T gB`` (right), ``-gB^T X`` (right, adjoint); it reaches
the packed LU through ``A = P L U`` (strict lower triangle: L, upper triangle: U), as PyTorch's.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from hookgrad import _backend
from hookgrad._dispatch import bind
from hookgrad._ops._meta_shapes import fortran
from hookgrad._ops.lu import _split, perm_matrix
from hookgrad._ops.registry import PRIMITIVES as P
from hookgrad._ops.registry import defop
from hookgrad._tensor import Tensor


def _solve_left(lu: np.ndarray, piv: np.ndarray, b: np.ndarray, adjoint: bool) -> np.ndarray:
    low, up = _split(lu)
    perm = perm_matrix(piv, lu.shape[-2], lu.dtype)
    if adjoint:  # A^T = U^T L^T P^T
        y = np.linalg.solve(np.swapaxes(up, -1, -2), b)
        y = np.linalg.solve(np.swapaxes(low, -1, -2), y)
        return fortran(perm @ y)
    y = np.swapaxes(perm, -1, -2) @ b
    return fortran(np.linalg.solve(up, np.linalg.solve(low, y)))  # LAPACK's layout, as PyTorch


def _lu_solve(LU: Any, pivots: Any, B: Any, left: bool = True, adjoint: bool = False) -> Any:
    xp = _backend.namespace_of(LU)
    lu, piv, b = (_backend.to_numpy(v) for v in (LU, pivots, B))
    if left:
        x = _solve_left(lu, piv, b, adjoint)
    else:  # X op(A) = B  <=>  op(A)^T X^T = B^T
        x = np.swapaxes(_solve_left(lu, piv, np.swapaxes(b, -1, -2), not adjoint), -1, -2)
    return xp.asarray(x.astype(b.dtype))


def lu_solve_tensor(LU: Tensor, pivots: Tensor, B: Tensor, left: bool, adjoint: bool) -> Tensor:
    return bind(P["linalg_lu_solve"], (LU, pivots, B), {"left": left, "adjoint": adjoint})


def _t(x: Tensor) -> Tensor:
    return x.transpose(-2, -1)


def _grad_B(grad: Tensor, LU: Tensor, pivots: Tensor, left: bool, adjoint: bool) -> Tensor:
    return lu_solve_tensor(LU, pivots, grad, left, not adjoint)


def _grad_A(gB: Tensor, X: Tensor, left: bool, adjoint: bool) -> Tensor:
    if left:
        return -(X @ _t(gB)) if adjoint else -(gB @ _t(X))
    return -(_t(gB) @ X) if adjoint else -(_t(X) @ gB)


def _grad_LU(grad: Tensor, LU: Tensor, pivots: Tensor, result: Tensor, left: bool,
             adjoint: bool) -> Tensor:
    gA = _grad_A(_grad_B(grad, LU, pivots, left, adjoint), result, left, adjoint)
    low, up, perm = bind(P["lu_unpack"], (LU, pivots), {})
    pga = _t(perm) @ gA
    return (pga @ _t(up)).tril(-1) + (_t(low) @ pga).triu()


def _jvp_LU(t: Tensor, LU: Tensor, pivots: Tensor, result: Tensor, left: bool,
            adjoint: bool) -> Tensor:
    low, up, perm = bind(P["lu_unpack"], (LU, pivots), {})
    dA = perm @ (t.tril(-1) @ up + low @ t.triu())
    dA = _t(dA) if adjoint else dA
    rhs = -(dA @ result) if left else -(result @ dA)
    return lu_solve_tensor(LU, pivots, rhs, left, adjoint)


defop(
    "linalg_lu_solve",
    impl=_lu_solve,
    inputs=("LU", "pivots", "B"),
    params=("left", "adjoint"),
    saves=("LU", "pivots", "result"),
    nondifferentiable={"pivots": "integer pivots"},
    vjp={
        "LU": _grad_LU,
        "B": lambda grad, LU, pivots, left, adjoint: _grad_B(grad, LU, pivots, left, adjoint),
    },
    jvp={
        "LU": _jvp_LU,
        "B": lambda t, LU, pivots, left, adjoint: lu_solve_tensor(LU, pivots, t, left, adjoint),
    },
)


from hookgrad._ops._batching import batches as _batches  # noqa: E402
from hookgrad._ops._batching import leading_batch  # noqa: E402

_batches(["linalg_lu_solve"], leading_batch)

from hookgrad._ops import _meta_shapes  # noqa: E402

_meta_shapes.shapes(["linalg_lu_solve"], _meta_shapes.lu_solve)
