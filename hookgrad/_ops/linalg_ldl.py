"""``linalg_ldl_factor_ex`` and ``linalg_ldl_solve``: Bunch-Kaufman LDLᵀ and its solve.

NOTE [LDL pivots]
PyTorch calls LAPACK ``sytrf`` on the lower triangle and returns its compact result: ``LD``
holds the unit lower factor L below the diagonal and the block-diagonal D (1x1 and 2x2 blocks)
on and just below it, the upper triangle zeroed; ``pivots`` are LAPACK's 1-based ``ipiv`` (a
positive k: row/column k was swapped with the current one and the block is 1x1; two equal
negative entries -p: a 2x2 block, its second row swapped with p). `_sytf2` is LAPACK's unblocked
``dsytf2`` (the path ``sytrf`` takes for small matrices) step for step, so the pivots, and the
values up to rounding, are PyTorch's; `_sytrs` is LAPACK's ``dsytrs``. Results are
column-major, as LAPACK writes them. Neither op has a derivative in PyTorch: a graph through
them records a ``NotImplemented`` node that raises when backward or forward AD reaches it.
Both take any leading batch dimensions, so vmap folds its dimension in front, and their meta
rules give PyTorch's shapes, dtypes and strides.

Mirrors: ``torch.linalg.ldl_factor_ex``, ``torch.linalg.ldl_solve`` (the kernels).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from hookgrad import _backend
from hookgrad._ops.registry import defop

__all__ = ["LDL_FACTOR", "LDL_SOLVE"]

_ALPHA = (1.0 + math.sqrt(17.0)) / 8.0


def _swap_pivot(a: np.ndarray, k: int, kk: int, kp: int, kstep: int) -> None:
    """Interchange rows/columns kk and kp of the trailing lower triangle (0-based)."""
    n = a.shape[0]
    if kp < n - 1:
        a[kp + 1:, [kk, kp]] = a[kp + 1:, [kp, kk]]
    seg = a[kk + 1:kp, kk].copy()
    a[kk + 1:kp, kk] = a[kp, kk + 1:kp]
    a[kp, kk + 1:kp] = seg
    a[kk, kk], a[kp, kp] = a[kp, kp], a[kk, kk]
    if kstep == 2:
        a[k + 1, k], a[kp, k] = a[kp, k], a[k + 1, k]


def _choose(a: np.ndarray, k: int) -> tuple[int, int]:
    """(kp, kstep) of LAPACK's Bunch-Kaufman test at column k; kp = -1 for a zero column."""
    n = a.shape[0]
    absakk = abs(a[k, k])
    imax, colmax = k, 0.0
    if k < n - 1:
        imax = k + 1 + int(np.argmax(np.abs(a[k + 1:, k])))
        colmax = abs(a[imax, k])
    if max(absakk, colmax) == 0.0 or math.isnan(absakk):
        return -1, 1
    if absakk >= _ALPHA * colmax:
        return k, 1
    row = np.abs(a[imax, k:imax])
    rowmax = float(row.max())
    if imax < n - 1:
        rowmax = max(rowmax, float(np.abs(a[imax + 1:, imax]).max()))
    if absakk >= _ALPHA * colmax * (colmax / rowmax):
        return k, 1
    if abs(a[imax, imax]) >= _ALPHA * rowmax:
        return imax, 1
    return imax, 2


def _eliminate(a: np.ndarray, k: int, kstep: int) -> None:
    n = a.shape[0]
    if kstep == 1:
        if k < n - 1:
            d11 = 1.0 / a[k, k]
            x = a[k + 1:, k].copy()
            a[k + 1:, k + 1:] -= np.tril(d11 * np.outer(x, x))
            a[k + 1:, k] *= d11
        return
    if k < n - 2:
        d21 = a[k + 1, k]
        d11, d22 = a[k + 1, k + 1] / d21, a[k, k] / d21
        t = 1.0 / (d11 * d22 - 1.0)
        d21 = t / d21
        for j in range(k + 2, n):
            wk = d21 * (d11 * a[j, k] - a[j, k + 1])
            wkp1 = d21 * (d22 * a[j, k + 1] - a[j, k])
            a[j:, j] -= a[j:, k] * wk + a[j:, k + 1] * wkp1
            a[j, k], a[j, k + 1] = wk, wkp1


def _sytf2(a: np.ndarray) -> tuple[np.ndarray, np.ndarray, int]:
    """LAPACK ``dsytf2`` (UPLO='L') on a copy: (LD, 1-based ipiv, info) (NOTE [LDL pivots])."""
    a = np.tril(a).copy()
    n = a.shape[0]
    ipiv = np.zeros(n, dtype=np.int32)
    info, k = 0, 0
    while k < n:
        kp, kstep = _choose(a, k)
        if kp < 0:
            info = info or k + 1
            ipiv[k] = k + 1
            k += 1
            continue
        kk = k + kstep - 1
        if kp != kk:
            _swap_pivot(a, k, kk, kp, kstep)
        _eliminate(a, k, kstep)
        if kstep == 1:
            ipiv[k] = kp + 1
        else:
            ipiv[k] = ipiv[k + 1] = -(kp + 1)
        k += kstep
    return np.tril(a), ipiv, info


def _sytrs(a: np.ndarray, ipiv: np.ndarray, b: np.ndarray) -> np.ndarray:
    """LAPACK ``dsytrs`` (UPLO='L'): solve A X = B from `_sytf2`'s factors."""
    b = b.copy()
    n, k = a.shape[0], 0
    while k < n:  # solve L D Y = P B
        if ipiv[k] > 0:
            kp = ipiv[k] - 1
            b[[k, kp]] = b[[kp, k]]
            b[k + 1:] -= np.outer(a[k + 1:, k], b[k])
            b[k] /= a[k, k]
            k += 1
            continue
        kp = -ipiv[k] - 1
        b[[k + 1, kp]] = b[[kp, k + 1]]
        b[k + 2:] -= np.outer(a[k + 2:, k], b[k]) + np.outer(a[k + 2:, k + 1], b[k + 1])
        akm1k = a[k + 1, k]
        akm1, ak = a[k, k] / akm1k, a[k + 1, k + 1] / akm1k
        denom = akm1 * ak - 1.0
        bkm1, bk = b[k] / akm1k, b[k + 1] / akm1k
        b[k], b[k + 1] = (ak * bkm1 - bk) / denom, (akm1 * bk - bkm1) / denom
        k += 2
    k = n - 1
    while k >= 0:  # solve Lᵀ P X = Y
        step = 1 if ipiv[k] > 0 else 2
        b[k] -= a[k + 1:, k] @ b[k + 1:]
        if step == 2:
            b[k - 1] -= a[k + 1:, k - 1] @ b[k + 1:]
        kp = abs(ipiv[k]) - 1
        b[[k, kp]] = b[[kp, k]]
        k -= step
    return b


def _column_major(arr: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(np.swapaxes(arr, -1, -2)).swapaxes(-1, -2)


def _factor_arrays(A_in: Any) -> tuple:
    xp, A = _backend.namespace_of(A_in), _backend.to_numpy(A_in)  # LAPACK-style host code
    flat = A.reshape((-1,) + A.shape[-2:])
    parts = [_sytf2(m.astype(np.float64)) for m in flat]
    batch = A.shape[:-2]
    if parts:
        ld = np.stack([p[0] for p in parts]).reshape(A.shape)
        piv = np.stack([p[1] for p in parts]).reshape(A.shape[:-1]).astype(np.int32)
    else:
        ld, piv = np.zeros(A.shape), np.zeros(A.shape[:-1], dtype=np.int32)
    info = np.array([p[2] for p in parts], dtype=np.int32).reshape(batch)
    return (xp.asarray(_column_major(ld.astype(A.dtype))), xp.asarray(piv), xp.asarray(info))


def _solve_arrays(LD_in: Any, pivots_in: Any, B_in: Any) -> Any:
    xp = _backend.namespace_of(B_in)
    LD, pivots, B = (_backend.to_numpy(a) for a in (LD_in, pivots_in, B_in))
    batch = np.broadcast_shapes(LD.shape[:-2], B.shape[:-2])
    ld = np.broadcast_to(LD, batch + LD.shape[-2:]).reshape((-1,) + LD.shape[-2:])
    piv = np.broadcast_to(pivots, batch + pivots.shape[-1:]).reshape((-1,) + pivots.shape[-1:])
    bb = np.broadcast_to(B, batch + B.shape[-2:]).reshape((-1,) + B.shape[-2:])
    x = np.stack([_sytrs(m, p, v.astype(np.float64)) for m, p, v in zip(ld, piv, bb)]) \
        if bb.shape[0] else np.zeros(bb.shape)
    return xp.asarray(_column_major(x.reshape(batch + B.shape[-2:]).astype(B.dtype)))


def _factor_vjp(grads: Any) -> Any:
    raise RuntimeError("derivative for aten::linalg_ldl_factor_ex is not implemented")


def _factor_jvp(t: Any) -> Any:
    raise RuntimeError("derivative for aten::linalg_ldl_factor_ex is not implemented")


def _solve_vjp(grad: Any) -> Any:
    raise RuntimeError("derivative for aten::linalg_ldl_solve is not implemented")


def _solve_jvp(t: Any) -> Any:
    raise RuntimeError("derivative for aten::linalg_ldl_solve is not implemented")


LDL_FACTOR = defop(
    "linalg_ldl_factor_ex",
    impl=_factor_arrays,
    inputs=("self",),
    num_outputs=3,
    nondifferentiable_outputs=(1, 2),
    node_name="NotImplemented",
    vjp={"self": _factor_vjp},
    jvp={"self": _factor_jvp},
)

LDL_SOLVE = defop(
    "linalg_ldl_solve",
    impl=_solve_arrays,
    inputs=("LD", "pivots", "B"),
    nondifferentiable={"pivots": "integer pivots"},
    node_name="NotImplemented",
    vjp={"LD": _solve_vjp, "B": _solve_vjp},
    jvp={"LD": _solve_jvp, "B": _solve_jvp},
)


def _factor_meta(A: Any, **_: Any) -> list:
    shape = tuple(A.shape)
    return [(shape, A.dtype, "F"), (shape[:-1], np.int32), (shape[:-2], np.int32)]


def _solve_meta(LD: Any, pivots: Any, B: Any, **_: Any) -> Any:
    batch = np.broadcast_shapes(tuple(LD.shape)[:-2], tuple(B.shape)[:-2])
    return (tuple(batch) + tuple(B.shape)[-2:], B.dtype, "F")


from hookgrad._ops._batching import batches as _batches  # noqa: E402
from hookgrad._ops._batching import leading_batch  # noqa: E402

_batches(["linalg_ldl_factor_ex", "linalg_ldl_solve"], leading_batch)

from hookgrad._ops import _meta_shapes  # noqa: E402

_meta_shapes.shapes(["linalg_ldl_factor_ex"], _factor_meta)
_meta_shapes.shapes(["linalg_ldl_solve"], _solve_meta)
