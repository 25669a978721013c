"""LU and Householder-QR functions of ``torch`` and ``torch.linalg``.

Mirrors: ``torch.linalg.lu_factor``, ``lu_factor_ex``, ``lu``, ``lu_solve``; ``torch.lu``,
``torch.lu_solve``, ``torch.lu_unpack``; ``torch.geqrf`` (LAPACK's ``geqrf`` through NumPy's raw
QR, no gradient as in PyTorch), ``torch.orgqr`` (``householder_product``) and ``torch.ormqr``
(``Q`` times `other`, composed of ``householder_product`` and ``matmul``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

import hookgrad._functional.creation as C
from hookgrad import _backend
from hookgrad import return_types as _return_types
from hookgrad._dispatch import bind
from hookgrad._functional.matrix_ops import householder_product
from hookgrad._functional.shape import cat
from hookgrad._ops import lu as _lu  # noqa: F401  (registers the LU primitives)
from hookgrad._ops import lu_solve as _lus  # noqa: F401
from hookgrad._ops.registry import PRIMITIVES as P
from hookgrad._surface.install import _type_name
from hookgrad._tensor import Tensor

__all__ = ["lu", "lu_solve", "lu_unpack", "geqrf", "orgqr", "ormqr"]

RETURN_TYPES = {name: _return_types._make(name, fields) for name, fields in [
    ("linalg_lu_factor", ("LU", "pivots")), ("linalg_lu_factor_ex", ("LU", "pivots", "info")),
    ("linalg_lu", ("P", "L", "U")), ("lu_unpack", ("P", "L", "U")), ("geqrf", ("a", "tau"))]}


def _check_matrix(A: Tensor, name: str) -> None:
    if A.dim() < 2:
        raise RuntimeError(f"torch.{name}: Expected tensor with 2 or more dimensions. Got size: "
                           f"{list(A.shape)} instead")
    if A._data.dtype.kind != "f":
        raise NotImplementedError(f"\"lu_cpu\" not implemented for '{_type_name(A.dtype)}'")


def _check_pivot(pivot: bool, name: str) -> None:
    if not pivot:
        raise RuntimeError(f"linalg.{name}: LU without pivoting is not implemented on the CPU")


def lu_factor_ex(A: Tensor, *, pivot: bool = True, check_errors: bool = False,
                 out: Any = None) -> Any:
    """Packed LU, pivots and LAPACK info. Mirrors: ``torch.linalg.lu_factor_ex``."""
    _check_matrix(A, "lu_factor_ex")
    _check_pivot(pivot, "lu_factor_ex")
    lu_, piv, info = bind(P["linalg_lu_factor_ex"], (A,),
                          {"pivot": True, "check_errors": check_errors})
    return RETURN_TYPES["linalg_lu_factor_ex"]((lu_, piv, info))


def lu_factor(A: Tensor, *, pivot: bool = True, out: Any = None) -> Any:
    """Packed LU and pivots; raises on a singular U. Mirrors: ``torch.linalg.lu_factor``."""
    _check_matrix(A, "lu_factor")
    _check_pivot(pivot, "lu_factor")
    lu_, piv, info = lu_factor_ex(A)
    # under vmap the check reads the physical info (every level's batch in front), as
    # PyTorch's batching rule of _linalg_check_errors does: always a batch of matrices
    phys = info
    while getattr(phys, "_bt_value", None) is not None:
        phys = phys._bt_value
    if not _backend.has_data(phys._data):
        return RETURN_TYPES["linalg_lu_factor"]((lu_, piv))  # meta: no values to check
    bad = np.asarray(phys.numpy()).reshape(-1)
    if bad.size and bad.max() > 0:
        k = int(bad[bad > 0][0])  # PyTorch prints LAPACK's 1-based info as the index
        batch = "" if phys.dim() == 0 else f"(Batch element {int(np.nonzero(bad)[0][0])}): "
        raise RuntimeError(
            f"torch.linalg.lu_factor: {batch}U[{k},{k}] is zero and using it on lu_solve would "
            "result in a division by zero. If you still want to perform the factorization, "
            "consider calling linalg.lu(A, pivot) or linalg.lu_factor_ex(A, pivot)")
    return RETURN_TYPES["linalg_lu_factor"]((lu_, piv))


def linalg_lu(A: Tensor, *, pivot: bool = True, out: Any = None) -> Any:
    """``A = P L U``. Mirrors: ``torch.linalg.lu``."""
    _check_matrix(A, "lu")
    _check_pivot(pivot, "lu")
    low, up, perm = bind(P["linalg_lu"], (A,), {"pivot": True})
    return RETURN_TYPES["linalg_lu"]((perm, low, up))


def lu_unpack(LU_data: Tensor, LU_pivots: Tensor, unpack_data: bool = True,
              unpack_pivots: bool = True, *, out: Any = None) -> Any:
    """(P, L, U) from a packed LU. Mirrors: ``torch.lu_unpack``."""
    if LU_pivots._data.dtype != np.int32:
        raise RuntimeError("torch.lu_unpack: LU_pivots is expected to be a contiguous tensor of "
                           f"torch.int32 dtype. Note: this function is intended to be used with "
                           "the output produced by torch.linalg.lu_factor")
    low, up, perm = bind(P["lu_unpack"], (LU_data, LU_pivots), {})
    return RETURN_TYPES["lu_unpack"]((perm, low, up))


def linalg_lu_solve(LU: Tensor, pivots: Tensor, B: Tensor, *, left: bool = True,
                    adjoint: bool = False, out: Any = None) -> Tensor:
    """Solve with an LU factorisation. Mirrors: ``torch.linalg.lu_solve``."""
    n = LU.shape[-1]
    if LU.shape[-2] != n:
        raise RuntimeError("linalg.lu_solve: A must be batches of square matrices, but they are "
                           f"{LU.shape[-2]} by {n} matrices")
    if (B.shape[-2] if left else B.shape[-1]) != n:
        eq = "AX = B" if left else "XA = B"
        raise RuntimeError(f"linalg.lu_solve: Incompatible shapes of A and B for the equation "
                           f"{eq} ({n}x{n} and {B.shape[-2]}x{B.shape[-1]})")
    if B.dtype != LU.dtype:
        raise RuntimeError(f"linalg.lu_solve: Expected LU and B to have the same dtype, but "
                           f"found LU of type {_type_name(LU.dtype)} and B of type "
                           f"{_type_name(B.dtype)} instead")
    return bind(P["linalg_lu_solve"], (LU, pivots, B), {"left": left, "adjoint": adjoint})


def lu(A: Tensor, pivot: bool = True, get_infos: bool = False, out: Any = None) -> tuple:
    """Deprecated ``torch.lu``: (LU, pivots[, infos]). Mirrors: ``torch.lu``."""
    res = lu_factor_ex(A, pivot=pivot)
    return (res.LU, res.pivots, res.info) if get_infos else (res.LU, res.pivots)


def lu_solve(b: Tensor, LU_data: Tensor, LU_pivots: Tensor, *, out: Any = None) -> Tensor:
    """Deprecated ``torch.lu_solve(b, LU, pivots)``. Mirrors: ``torch.lu_solve``."""
    return linalg_lu_solve(LU_data, LU_pivots, b)


def geqrf(input: Tensor, *, out: Any = None) -> Any:
    """Householder QR in LAPACK's packed form: (a, tau). Mirrors: ``torch.geqrf``."""
    if input.dim() < 2:
        raise RuntimeError("torch.geqrf: input must have at least 2 dimensions.")
    arr = np.asarray(input.detach().numpy())
    batch, (m, n) = arr.shape[:-2], arr.shape[-2:]
    flat = arr.reshape((-1, m, n))
    hs, taus = [], []
    for mat in flat:
        h, tau = np.linalg.qr(mat, mode="raw")
        hs.append(h.T)
        taus.append(tau)
    a = np.stack(hs).reshape(arr.shape) if hs else arr.copy()
    tau = np.stack(taus).reshape(batch + (min(m, n),)) if taus else np.zeros(
        batch + (min(m, n),), dtype=arr.dtype)
    return RETURN_TYPES["geqrf"]((C.tensor(a.astype(arr.dtype)), C.tensor(tau.astype(arr.dtype))))


def orgqr(input: Tensor, tau: Tensor) -> Tensor:
    """Q from Householder reflectors. Mirrors: ``torch.orgqr`` (``linalg.householder_product``)."""
    return householder_product(input, tau)


def ormqr(input: Tensor, tau: Tensor, other: Tensor, left: bool = True,
          transpose: bool = False, *, out: Any = None) -> Tensor:
    """``op(Q) @ other`` (or ``other @ op(Q)``) with Q from reflectors. Mirrors: ``torch.ormqr``."""
    m = input.shape[-2]
    if (other.shape[-2] if left else other.shape[-1]) != m:
        raise RuntimeError(f"torch.ormqr: other.shape[{-2 if left else -1}] must be equal to "
                           f"input.shape[-2]")
    vecs = input
    if input.shape[-1] < m:  # complete Q (m x m): pad with zero reflectors
        pad = C.zeros(*input.shape[:-1], m - input.shape[-1], dtype=input.dtype)
        vecs = cat([input, pad], -1)
        tau = cat([tau, C.zeros(*tau.shape[:-1], m - tau.shape[-1], dtype=tau.dtype)], -1)
    q = orgqr(vecs, tau)
    q = q.transpose(-2, -1) if transpose else q
    return q @ other if left else other @ q


METHODS = {"lu": lu, "lu_solve": lu_solve, "geqrf": geqrf, "orgqr": orgqr, "ormqr": ormqr}
LINALG = {"lu_factor": lu_factor, "lu_factor_ex": lu_factor_ex, "lu": linalg_lu,
          "lu_solve": linalg_lu_solve}
