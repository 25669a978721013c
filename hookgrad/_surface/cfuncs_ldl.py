"""LDLᵀ factorization of symmetric matrices with Bunch-Kaufman pivoting, and its solve.

NOTE [LDL pivots]
PyTorch calls LAPACK ``sytrf`` on the lower triangle and returns its compact result: ``LD``
holds the unit lower factor L below the diagonal and the block-diagonal D (1x1 and 2x2 blocks)
on and just below it, the upper triangle zeroed; ``pivots`` are LAPACK's 1-based ``ipiv`` (a
positive k: row/column k was swapped with the current one and the block is 1x1; two equal
negative entries -p: a 2x2 block, its second row swapped with p). `_sytf2` is LAPACK's unblocked
``dsytf2`` (the path ``sytrf`` takes for small matrices) step for step, so the pivots, and the
values up to rounding, are PyTorch's; `_sytrs` is LAPACK's ``dsytrs``. Neither has a
derivative in PyTorch: results of inputs that need a gradient record a raising
``NotImplemented`` node (`hookgrad._ops.linalg_ldl`).

Mirrors: ``torch.linalg.ldl_factor``, ``ldl_factor_ex``, ``ldl_solve``.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from hookgrad import _backend
from hookgrad import return_types as _rt
from hookgrad._dispatch import bind
from hookgrad._dtypes import int32
from hookgrad._ops.linalg_ldl import LDL_FACTOR, LDL_SOLVE
from hookgrad._tensor import Tensor

__all__: list[str] = []

_ALPHA = (1.0 + math.sqrt(17.0)) / 8.0
_FACTOR = _rt._make("linalg_ldl_factor", ("LD", "pivots"))
_FACTOR_EX = _rt._make("linalg_ldl_factor_ex", ("LD", "pivots", "info"))


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


def _host(t: Tensor) -> np.ndarray:
    return np.asarray(_backend.backend_of(t._data).to_host(t._data))


def _tensor_like(t: Tensor, arr: np.ndarray, dtype: Any = None) -> Tensor:
    backend = _backend.backend_of(t._data)
    return Tensor._make(backend.from_host(np.array(arr, dtype=dtype or t.dtype.np)))


def _check_square(A: Tensor, fn: str) -> None:
    if A.dim() < 2:
        raise RuntimeError(f"torch.linalg.{fn}: The input tensor A must have at least 2 "
                           "dimensions.")
    if A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"torch.linalg.{fn}: A must be batches of square matrices, but they "
                           f"are {A.shape[-2]} by {A.shape[-1]} matrices")
    if not A.is_floating_point():
        raise RuntimeError(f"torch.linalg.{fn}: Expected a floating point or complex tensor as "
                           f"input. Got {A.dtype.scalar_type}")


def ldl_factor_ex(A: Tensor, *, hermitian: bool = False, check_errors: bool = False,
                  out: Any = None) -> Any:
    """(LD, pivots, info) of the Bunch-Kaufman LDLᵀ factorization (NOTE [LDL pivots]).

    ``info`` is 0, or k when D's k-th diagonal entry is exactly zero (the factorization is
    complete, D is singular). With ``check_errors`` a nonzero ``info`` raises, as PyTorch does.

    Mirrors: ``torch.linalg.ldl_factor_ex`` (real matrices: ``hermitian`` changes nothing).
    """
    _check_square(A, "ldl_factor_ex")
    arr = _host(A)
    batch = arr.shape[:-2]
    flat = arr.reshape((-1,) + arr.shape[-2:])
    parts = [_sytf2(m.astype(np.float64)) for m in flat]
    ld = np.stack([p[0] for p in parts]).reshape(arr.shape) if parts else np.zeros(arr.shape)
    piv = np.stack([p[1] for p in parts]).reshape(arr.shape[:-1]) if parts else \
        np.zeros(arr.shape[:-1], dtype=np.int32)
    info = np.array([p[2] for p in parts], dtype=np.int32).reshape(batch)
    if check_errors and (info != 0).any():
        raise RuntimeError("false INTERNAL ASSERT FAILED: torch.linalg.ldl_factor_ex: Unknown "
                           f"error code: {int(info[info != 0].flat[0])}.")
    LD = bind(LDL_FACTOR, (A, _tensor_like(A, ld)), {})
    return _FACTOR_EX((LD, _tensor_like(A, piv, np.int32), _tensor_like(A, info, np.int32)))


def ldl_factor(A: Tensor, *, hermitian: bool = False, out: Any = None) -> Any:
    """(LD, pivots) of the Bunch-Kaufman LDLᵀ factorization; raises on a singular D.

    Mirrors: ``torch.linalg.ldl_factor``.
    """
    _check_square(A, "ldl_factor")
    LD, pivots, info = ldl_factor_ex(A, hermitian=hermitian)
    if (_host(info) != 0).any():
        raise RuntimeError("false INTERNAL ASSERT FAILED: torch.linalg.ldl_factor: Unknown "
                           f"error code: {int(_host(info)[_host(info) != 0].flat[0])}.")
    return _FACTOR((LD, pivots))


def ldl_solve(LD: Tensor, pivots: Tensor, B: Tensor, *, hermitian: bool = False,
              out: Any = None) -> Tensor:
    """Solve ``A X = B`` from `ldl_factor`'s ``(LD, pivots)``.

    Mirrors: ``torch.linalg.ldl_solve``.
    """
    if LD.shape[-1] != B.shape[-2]:
        raise RuntimeError("Incompatible matrix sizes for torch.linalg.ldl_solve: each A matrix "
                           f"is {LD.shape[-1]} by {LD.shape[-1]} but each b matrix is "
                           f"{B.shape[-2]} by {B.shape[-1]}")
    ld, piv, b = _host(LD), _host(pivots), _host(B)
    batch = np.broadcast_shapes(ld.shape[:-2], b.shape[:-2])
    ld = np.broadcast_to(ld, batch + ld.shape[-2:]).reshape((-1,) + ld.shape[-2:])
    piv = np.broadcast_to(piv, batch + piv.shape[-1:]).reshape((-1,) + piv.shape[-1:])
    bb = np.broadcast_to(b, batch + b.shape[-2:]).reshape((-1,) + b.shape[-2:])
    x = np.stack([_sytrs(m, p, v.astype(np.float64)) for m, p, v in zip(ld, piv, bb)]) \
        if bb.shape[0] else np.zeros(bb.shape)
    x = x.reshape(batch + b.shape[-2:])
    return bind(LDL_SOLVE, (LD, B, _tensor_like(B, x)), {})


LINALG = {"ldl_factor": ldl_factor, "ldl_factor_ex": ldl_factor_ex, "ldl_solve": ldl_solve}
RETURN_TYPES = {"linalg_ldl_factor": _FACTOR, "linalg_ldl_factor_ex": _FACTOR_EX}
