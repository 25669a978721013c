"""``hookgrad.linalg``: the functions of ``torch.linalg``.

Mirrors: ``torch.linalg``. The norms, inverse, determinants and Cholesky are defined here; the
spectral decompositions (``eigh``, ``svd``, ``qr``) and the composites on them (``pinv``,
``lstsq``, ``solve_triangular``...) are added by ``hookgrad._surface.linalg_ops``. Matrix
norms that need singular values (``'nuc'``, ``2``, ``-2``) still raise NotImplementedError.
"""

from __future__ import annotations

from typing import Any

from hookgrad._functional.linalg import matrix_norm, vector_norm
from hookgrad._functional.linalg import matmul
from hookgrad._functional.linalg_decomp import LinAlgError, cholesky, det, inv, slogdet
from hookgrad._functional.linalg_triangular import cholesky_ex, solve_triangular
from hookgrad._functional.matrix_ops import householder_product, matrix_exp, solve
from hookgrad._functional._slicing import diagonal as _diagonal
from hookgrad._tensor import Tensor as _Tensor

__all__ = ["vector_norm", "matrix_norm", "norm", "matrix_exp", "householder_product",
           "solve", "inv", "det", "slogdet", "cholesky", "LinAlgError", "matmul", "vecdot",
           "multi_dot", "diagonal", "cholesky_ex", "solve_triangular"]


def vecdot(x: _Tensor, y: _Tensor, *, dim: int = -1) -> _Tensor:
    """Dot product along `dim` (real dtypes). Mirrors: ``torch.linalg.vecdot``."""
    return (x * y).sum(dim)


def multi_dot(tensors: Any, *, out: Any = None) -> _Tensor:
    """Product of a chain of matrices (1-D ends as vectors). Mirrors: ``torch.linalg.multi_dot``."""
    tensors = list(tensors)
    if len(tensors) < 2:
        raise RuntimeError(f"multi_dot(): expected at least 2 tensors but got {len(tensors)}")
    for pos, t in (("first", tensors[0]), ("last", tensors[-1])):
        if t.dim() not in (1, 2):
            raise RuntimeError(f"multi_dot(): the {pos} tensor must be 1D or 2D but got "
                               f"{t.dim()}D")
    result = tensors[0]
    for t in tensors[1:]:
        result = matmul(result, t)
    return result


def diagonal(A: _Tensor, *, offset: int = 0, dim1: int = -2, dim2: int = -1) -> _Tensor:
    """Mirrors: ``torch.linalg.diagonal``."""
    return _diagonal(A, offset, dim1, dim2)


def norm(A: _Tensor, ord: Any = None, dim: Any = None, keepdim: bool = False, *,
         dtype: Any = None) -> _Tensor:
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
    if ndim == 2 or isinstance(ord, str):  # a matrix-norm name asks for a matrix
        return matrix_norm(A, ord, (-2, -1), keepdim, dtype=dtype)
    return vector_norm(A, ord, None, keepdim, dtype=dtype)

# typing helpers are not part of PyTorch's namespace (tools crawl dir() of it)
del Any, annotations
