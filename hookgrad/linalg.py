"""``hookgrad.linalg``: the norm functions of ``torch.linalg``.

Mirrors: ``torch.linalg`` (``vector_norm``, ``matrix_norm``, ``norm``). Matrix norms that need a
singular value decomposition (``'nuc'``, ``2``, ``-2``) are not available and raise
NotImplementedError.
"""

from __future__ import annotations

from typing import Any

from hookgrad._functional.linalg import matrix_norm, vector_norm
from hookgrad._functional.matrix_ops import householder_product, matrix_exp, solve
from hookgrad._tensor import Tensor

__all__ = ["vector_norm", "matrix_norm", "norm", "matrix_exp", "householder_product",
           "solve"]


def norm(A: Tensor, ord: Any = None, dim: Any = None, keepdim: bool = False, *,
         dtype: Any = None) -> Tensor:
    """Vector norm (int `dim`, or no `dim` and no `ord`) or matrix norm (2-tuple `dim`, 2-D).

    Mirrors: ``torch.linalg.norm``.
    """
    if dim is not None and isinstance(dim, int):
        dim = (dim,)
    if dim is not None:
        if len(dim) == 2:
            return matrix_norm(A, "fro" if ord is None else ord, dim, keepdim, dtype=dtype)
        return vector_norm(A, 2 if ord is None else ord, dim, keepdim, dtype=dtype)
    if ord is None:
        return vector_norm(A, 2, None, keepdim, dtype=dtype)
    ndim = A._data.ndim
    if ndim not in (1, 2):
        raise RuntimeError(
            "linalg.norm: If dim is not specified but ord is, the input must be 1D or 2D. Got "
            f"{ndim}D."
        )
    if ndim == 2:
        return matrix_norm(A, ord, (-2, -1), keepdim, dtype=dtype)
    return vector_norm(A, ord, None, keepdim, dtype=dtype)
