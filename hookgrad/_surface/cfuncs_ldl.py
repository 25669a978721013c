"""``torch.linalg.ldl_factor``/``ldl_factor_ex``/``ldl_solve``: argument checks and results.

The factorization and the solve are primitives (`hookgrad._ops.linalg_ldl`, NOTE [LDL
pivots]), so vmap and the meta device reach them like any other op.

Mirrors: ``torch.linalg.ldl_factor``, ``ldl_factor_ex``, ``ldl_solve``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from hookgrad import _backend
from hookgrad import return_types as _rt
from hookgrad._dispatch import bind
from hookgrad._ops.linalg_ldl import LDL_FACTOR, LDL_SOLVE
from hookgrad._tensor import Tensor

__all__: list[str] = []

_FACTOR = _rt._make("linalg_ldl_factor", ("LD", "pivots"))
_FACTOR_EX = _rt._make("linalg_ldl_factor_ex", ("LD", "pivots", "info"))


def _host(t: Tensor) -> np.ndarray:
    return np.asarray(_backend.backend_of(t._data).to_host(t._data))


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
    LD, pivots, info = bind(LDL_FACTOR, (A,), {})
    if check_errors and not A.is_meta and (_host(info) != 0).any():
        code = _host(info)
        raise RuntimeError("false INTERNAL ASSERT FAILED: torch.linalg.ldl_factor_ex: Unknown "
                           f"error code: {int(code[code != 0].flat[0])}.")
    return _FACTOR_EX((LD, pivots, info))


def ldl_factor(A: Tensor, *, hermitian: bool = False, out: Any = None) -> Any:
    """(LD, pivots) of the Bunch-Kaufman LDLᵀ factorization; raises on a singular D.

    Mirrors: ``torch.linalg.ldl_factor``.
    """
    _check_square(A, "ldl_factor")
    LD, pivots, info = ldl_factor_ex(A, hermitian=hermitian)
    if not A.is_meta and (_host(info) != 0).any():
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
    return bind(LDL_SOLVE, (LD, pivots, B), {})


LINALG = {"ldl_factor": ldl_factor, "ldl_factor_ex": ldl_factor_ex, "ldl_solve": ldl_solve}
RETURN_TYPES = {"linalg_ldl_factor": _FACTOR, "linalg_ldl_factor_ex": _FACTOR_EX}
