"""LU factorisation with partial pivoting, its unpacking and the LU solve.

Mirrors: ``torch.linalg.lu_factor_ex`` (node ``LinalgLuFactorExBackward0``), ``torch.linalg.lu``
(``LinalgLuBackward0``), ``torch.lu_unpack`` (``LuUnpackBackward0``) and
``torch.linalg.lu_solve`` (``LinalgLuSolveBackward0``). The factorisation is LAPACK's ``getrf``
written with NumPy (row of the largest magnitude, the first on ties; 1-based int32 pivots); the
gradients are PyTorch's ``linalg_lu_backward`` (square, wide and tall). Forward mode is given for
square matrices; wide and tall ones raise NotImplementedError there.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from hookgrad import _backend
from hookgrad._dispatch import bind
from hookgrad._ops._meta_shapes import fortran
from hookgrad._ops.registry import PRIMITIVES as P
from hookgrad._ops.registry import defop
from hookgrad._ops.shape import cat_tensors
from hookgrad._tensor import Tensor

_PIV = "integer pivots"


def getrf(a: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Batched partial-pivoting LU of (..., m, n): packed LU, 1-based pivots, LAPACK info."""
    lu = np.array(a, dtype=a.dtype, copy=True)
    m, n = lu.shape[-2:]
    k = min(m, n)
    batch = lu.shape[:-2]
    lu = lu.reshape((-1, m, n))
    piv = np.zeros((lu.shape[0], k), dtype=np.int32)
    info = np.zeros(lu.shape[0], dtype=np.int32)
    rows = np.arange(lu.shape[0])
    for j in range(k):
        p = j + np.argmax(np.abs(lu[:, j:, j]), axis=1)
        piv[:, j] = p + 1
        top, other = lu[rows, j].copy(), lu[rows, p].copy()
        lu[rows, j], lu[rows, p] = other, top
        pivot = lu[:, j, j]
        zero = pivot == 0
        info[(info == 0) & zero] = j + 1
        safe = np.where(zero, 1, pivot)
        lu[:, j + 1:, j] = np.where(zero[:, None], lu[:, j + 1:, j],
                                    lu[:, j + 1:, j] / safe[:, None])
        lu[:, j + 1:, j + 1:] -= lu[:, j + 1:, j:j + 1] * lu[:, j:j + 1, j + 1:]
    return lu.reshape(batch + (m, n)), piv.reshape(batch + (k,)), info.reshape(batch)


def perm_matrix(piv: np.ndarray, m: int, dtype: Any) -> np.ndarray:
    """P with ``A = P L U`` from 1-based sequential row swaps."""
    batch = piv.shape[:-1]
    flat = piv.reshape(-1, piv.shape[-1]) - 1
    order = np.tile(np.arange(m), (flat.shape[0], 1))
    rows = np.arange(flat.shape[0])
    for j in range(flat.shape[1]):
        p = flat[:, j]
        a, b = order[rows, j].copy(), order[rows, p].copy()
        order[rows, j], order[rows, p] = b, a
    eye = np.eye(m, dtype=dtype)
    # row i of P^T A is row order[i] of A, so P[order[i], i] = 1
    mats = np.ascontiguousarray(eye[order].swapaxes(-1, -2))  # row-major P, as PyTorch
    return mats.reshape(batch + (m, m))


def _split(lu: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    m, n = lu.shape[-2:]
    k = min(m, n)
    low = np.tril(lu[..., :, :k], -1) + np.eye(m, k, dtype=lu.dtype)
    up = np.triu(lu[..., :k, :])
    return low, up


def _lu_factor_ex(A: Any, pivot: bool = True, check_errors: bool = False) -> tuple:
    xp = _backend.namespace_of(A)
    lu, piv, info = getrf(_backend.to_numpy(A))
    return xp.asarray(fortran(lu)), xp.asarray(piv), xp.asarray(info)  # LAPACK's layout


def _lu(A: Any, pivot: bool = True) -> tuple:
    xp = _backend.namespace_of(A)
    lu, piv, _ = getrf(_backend.to_numpy(A))
    low, up = _split(lu)
    return xp.asarray(low), xp.asarray(up), xp.asarray(perm_matrix(piv, lu.shape[-2], lu.dtype))


def _lu_unpack(LU_data: Any, LU_pivots: Any, unpack_data: bool = True,
               unpack_pivots: bool = True) -> tuple:
    xp = _backend.namespace_of(LU_data)
    lu = _backend.to_numpy(LU_data)
    low, up = _split(lu)
    perm = perm_matrix(_backend.to_numpy(LU_pivots), lu.shape[-2], lu.dtype)
    return xp.asarray(low), xp.asarray(up), xp.asarray(perm)


def _mh(t: Tensor) -> Tensor:
    return t.transpose(-2, -1)


def _tri_solve(A: Tensor, B: Tensor, upper: bool, left: bool = True,
               unitriangular: bool = False) -> Tensor:
    return bind(P["linalg_solve_triangular"], (A, B),
                {"upper": upper, "left": left, "unitriangular": unitriangular})


def lu_backward(gL: Tensor | None, gU: Tensor | None, perm: Tensor, L: Tensor,
                U: Tensor) -> Tensor:
    """PyTorch's ``linalg_lu_backward``: the gradient of A from those of L and U."""
    m, n = L.shape[-2], U.shape[-1]
    k = min(m, n)
    if m == n:
        g = None if gL is None else (_mh(L) @ gL).tril(-1)
        if gU is not None:
            g = (gU @ _mh(U)).triu() if g is None else g + (gU @ _mh(U)).triu()
        g = _tri_solve(_mh(U), g, upper=False, left=False)
        g = _tri_solve(_mh(L), g, upper=True, unitriangular=True)
        return perm @ g
    if m < n:
        U1, U2 = U[..., :, :k], U[..., :, k:]
        g = None if gL is None else _mh(L) @ gL
        if gU is not None:
            term = gU.triu() @ _mh(U)
            g = -term if g is None else g - term
        g = _tri_solve(_mh(U1), g.tril(-1), upper=False, left=False)
        if gU is not None:
            g = _cat([g + gU[..., :, :k].triu(), gU[..., :, k:]], -1)
        g = _tri_solve(_mh(L), g, upper=True, unitriangular=True)
        if gU is None:
            g = _cat([g, U2.detach() * 0], -1)
        return perm @ g
    L1, L2 = L[..., :k, :], L[..., k:, :]
    g = None if gU is None else gU @ _mh(U)
    if gL is not None:
        term = _mh(L) @ gL.tril(-1)
        g = -term if g is None else g - term
    g = _tri_solve(_mh(L1), g.triu(), upper=True, unitriangular=True)
    if gL is not None:
        g = _cat([g + gL[..., :k, :].tril(-1), gL[..., k:, :]], -2)
    g = _tri_solve(_mh(U), g, upper=False, left=False)
    if gL is None:
        g = _cat([g, L2.detach() * 0], -2)
    return perm @ g


def _cat(ts: list, dim: int) -> Tensor:
    return cat_tensors(ts, dim % ts[0].ndim)


def lu_jvp(dA: Tensor, perm: Tensor, L: Tensor, U: Tensor) -> tuple[Tensor, Tensor]:
    """(dL, dU) of a square LU: ``L^{-1} P^T dA U^{-1}`` split into its triangles."""
    if L.shape[-2] != U.shape[-1]:
        raise NotImplementedError("hookgrad: forward-mode AD of the LU of a non-square matrix "
                                  "is not implemented")
    x = _tri_solve(L, _mh(perm) @ dA, upper=False, unitriangular=True)
    x = _tri_solve(U, x, upper=True, left=False)
    return L @ x.tril(-1), x.triu() @ U


def _factor_vjp(grads: tuple, result0: Tensor, result1: Tensor) -> Tensor:
    lu, piv = result0, result1
    low, up, perm = bind(P["lu_unpack"], (lu, piv), {})
    g = grads[0]
    return lu_backward(g.tril(-1)[..., :, : low.shape[-1]], g.triu()[..., : up.shape[-2], :],
                       perm, low, up)


def _factor_jvp(t: Tensor, result0: Tensor, result1: Tensor) -> tuple:
    low, up, perm = bind(P["lu_unpack"], (result0, result1), {})
    dl, du = lu_jvp(t, perm, low, up)
    return dl + du, None, None


defop(
    "linalg_lu_factor_ex",
    impl=_lu_factor_ex,
    inputs=("A",),
    params=("pivot", "check_errors"),
    num_outputs=3,
    nondifferentiable_outputs=(1, 2),
    saves=("result1", "result0"),  # PyTorch packs the pivots, then LU
    vjp={"A": _factor_vjp},
    jvp={"A": _factor_jvp},
)

defop(
    "linalg_lu",
    impl=_lu,
    inputs=("A",),
    params=("pivot",),
    num_outputs=3,
    nondifferentiable_outputs=(2,),  # outputs are (L, U, P) here; the surface returns (P, L, U)
    saves=("results",),
    vjp={"A": lambda grads, results: lu_backward(grads[0], grads[1], results[2], results[0],
                                                 results[1])},
    jvp={"A": lambda t, results: lu_jvp(t, results[2], results[0], results[1]) + (None,)},
)


def _unpack_vjp(grads: tuple, LU_data_shape: tuple) -> Tensor:
    gL, gU = grads[0], grads[1]
    m, n = LU_data_shape[-2:]
    k = min(m, n)
    parts = []
    if gL is not None:
        low = gL.tril(-1)
        parts.append(low if k == n else _cat([low, _zeros(low, LU_data_shape, -1, n - k)], -1))
    if gU is not None:
        up = gU.triu()
        parts.append(up if k == m else _cat([up, _zeros(up, LU_data_shape, -2, m - k)], -2))
    return parts[0] if len(parts) == 1 else parts[0] + parts[1]


def _zeros(like: Tensor, shape: tuple, dim: int, size: int) -> Tensor:
    s = list(like.shape)
    s[dim] = size
    return Tensor._make(_backend.namespace_of(like._data).zeros(tuple(s), dtype=like._data.dtype))


defop(
    "lu_unpack",
    impl=_lu_unpack,
    inputs=("LU_data", "LU_pivots"),
    params=("unpack_data", "unpack_pivots"),
    num_outputs=3,
    nondifferentiable_outputs=(2,),  # (L, U, P) here; the surface returns (P, L, U)
    nondifferentiable={"LU_pivots": _PIV},
    vjp={"LU_data": _unpack_vjp},
    jvp={"LU_data": lambda t, LU_data_shape: _unpack_jvp(t, LU_data_shape)},
)


def _unpack_jvp(t: Tensor, shape: tuple) -> tuple:
    m, n = shape[-2:]
    k = min(m, n)
    return t[..., :, :k].tril(-1), t[..., :k, :].triu(), None


from hookgrad._ops._batching import batches as _batches  # noqa: E402
from hookgrad._ops._batching import leading_batch  # noqa: E402

_batches(["linalg_lu_factor_ex", "linalg_lu", "lu_unpack"], leading_batch)

from hookgrad._ops import _meta_shapes  # noqa: E402

_meta_shapes.shapes(["linalg_lu_factor_ex"], _meta_shapes.lu_factor)
_meta_shapes.shapes(["linalg_lu", "lu_unpack"], _meta_shapes.lu_parts)
