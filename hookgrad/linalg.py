"""``hookgrad.linalg``: the norm functions of ``torch.linalg``.

Mirrors: ``torch.linalg`` (``vector_norm``, ``matrix_norm``, ``norm``). Matrix norms that need a
singular value decomposition (``'nuc'``, ``2``, ``-2``) are not available and raise
NotImplementedError.
"""

from __future__ import annotations

import math
import operator
from typing import Any

from hookgrad._functional.linalg import vector_norm
from hookgrad._functional.sorting import amax, amin
from hookgrad._ops._shapes import normalize_dim
from hookgrad._tensor import Tensor

__all__ = ["vector_norm", "matrix_norm", "norm"]


def matrix_norm(A: Tensor, ord: Any = "fro", dim: Any = (-2, -1), keepdim: bool = False, *,
                dtype: Any = None) -> Tensor:
    """Frobenius, 1, -1, inf or -inf norm of the matrices over the two dims `dim`.

    Mirrors: ``torch.linalg.matrix_norm`` (composed as ATen composes it: ``'fro'`` is a vector
    2-norm, ``1``/``inf`` an ``amax`` of vector 1-norms, ``-1``/``-inf`` an ``amin``).
    """
    ndim = A._data.ndim
    if ndim < 2:
        raise RuntimeError(
            "linalg.matrix_norm: The input tensor A must have at least 2 dimensions."
        )
    if len(dim) != 2:
        raise RuntimeError(
            f"linalg.matrix_norm: dim must be a 2-tuple. Got {' '.join(str(d) for d in dim)}"
        )
    dims = [normalize_dim(operator.index(d), ndim) for d in dim]
    if dims[0] == dims[1]:
        raise RuntimeError(f"linalg.matrix_norm: dims must be different. Got ({dims[0]}, "
                           f"{dims[1]})")
    if isinstance(ord, str):
        if ord == "fro":
            return vector_norm(A, 2, dims, keepdim, dtype=dtype)
        if ord == "nuc":
            raise NotImplementedError("hookgrad.linalg.matrix_norm: 'nuc' needs an SVD")
        raise RuntimeError(f"linalg.matrix_norm: Order {ord} not supported.")
    if abs(ord) == 2:
        raise NotImplementedError("hookgrad.linalg.matrix_norm: ord=+-2 needs an SVD")
    if abs(ord) not in (1, math.inf):
        raise RuntimeError(f"linalg.matrix_norm: Order {ord} not supported.")
    d0, d1 = (dims[1], dims[0]) if abs(ord) == math.inf else (dims[0], dims[1])
    if not keepdim and d0 < d1:
        d1 -= 1
    sums = vector_norm(A, 1.0, (d0,), keepdim, dtype=dtype)
    return (amax if ord > 0 else amin)(sums, d1, keepdim)


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
