"""Public inverse, determinant, slogdet and Cholesky functions over `hookgrad._ops.linalg_decomp`.

Mirrors: ``torch.linalg.inv``, ``det``, ``slogdet``, ``cholesky`` (and ``torch.inverse``,
``torch.det``, ``torch.logdet``, ``torch.slogdet``), raising `LinAlgError` (a RuntimeError, as
PyTorch's ``torch._C._LinAlgError``) for singular or non-positive-definite inputs.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from hookgrad._backend import namespace_of
from hookgrad._dispatch import bind
from hookgrad._ops.linalg_decomp import CHOLESKY, DET, DET_SIGN, INV, LOGABSDET
from hookgrad._tensor import Tensor
from hookgrad.return_types import _make

__all__ = ["LinAlgError", "inv", "det", "slogdet", "logdet", "cholesky"]


class _LinAlgError(RuntimeError):
    """A linear-algebra routine failed on its input (a singular or not positive-definite
    matrix). PyTorch's class is ``torch._C._LinAlgError``, so that is its name here too.

    Mirrors: ``torch.linalg.LinAlgError``.
    """


LinAlgError = _LinAlgError


def _square(A: Tensor, fn: str) -> None:
    if A.dim() < 2:
        raise RuntimeError(f"linalg.{fn}: The input tensor A must have at least 2 dimensions.")
    if A.shape[-1] != A.shape[-2]:
        rows = A.shape[-2] if A.dim() > 1 else 1
        raise RuntimeError(f"linalg.{fn}: A must be batches of square matrices, but they are "
                           f"{rows} by {A.shape[-1]} matrices")
    if not A.is_floating_point():
        raise RuntimeError(f"linalg.{fn}: Expected a floating point or complex tensor as input. "
                           f"Got {str(A.dtype).replace('torch.', '').capitalize()}")


def inv(A: Tensor, *, out: Any = None) -> Tensor:
    """Matrix inverse (``LinalgInvExBackward0``). Mirrors: ``torch.linalg.inv``."""
    _square(A, "inv")
    try:
        return bind(INV, (A,), {})
    except np.linalg.LinAlgError:
        raise LinAlgError("linalg.inv: The diagonal element 1 is zero, the inversion could not "
                          "be completed because the input matrix is singular.") from None


def det(A: Tensor, *, out: Any = None) -> Tensor:
    """Determinant (``LinalgDetBackward0``). Mirrors: ``torch.linalg.det``."""
    _square(A, "det")
    return bind(DET, (A,), {})


def slogdet(A: Tensor, *, out: Any = None) -> Any:
    """(sign, log|det|); the second carries the gradient. Mirrors: ``torch.linalg.slogdet``."""
    _square(A, "slogdet")
    sign = bind(DET_SIGN, (A,), {})  # not differentiable, but a primitive: vmap sees it
    return _SLOGDET((sign, bind(LOGABSDET, (A,), {})))


def logdet(A: Tensor) -> Tensor:
    """log(det(A)): nan for a negative determinant, -inf for zero. Mirrors: ``torch.logdet``."""
    sign, logabs = slogdet(A)
    return logabs.where(sign >= 0, math.nan)


def cholesky(A: Tensor, *, upper: bool = False, out: Any = None) -> Tensor:
    """Lower Cholesky factor, or its transpose with `upper` (``LinalgCholeskyExBackward0``).

    Mirrors: ``torch.linalg.cholesky``.
    """
    _square(A, "cholesky")
    try:
        L = bind(CHOLESKY, (A,), {})
    except np.linalg.LinAlgError:
        raise LinAlgError("linalg.cholesky: The factorization could not be completed because "
                          "the input is not positive-definite (the leading minor of order 1 is "
                          "not positive-definite).") from None
    return L.transpose(-2, -1) if upper else L


_SLOGDET = _make("slogdet", ("sign", "logabsdet"))
