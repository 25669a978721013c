"""Stacking, splitting, diagonal and product composites of PyTorch's namespace.

Mirrors: ``torch`` functions of the same names (``column_stack``, ``diag_embed``, ``kron``, ...).
"""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np

import hookgrad._functional.creation as C
import hookgrad._functional.linalg as L
import hookgrad._functional.misc as M
import hookgrad._functional.reduction as R
import hookgrad._functional.shape as S
from hookgrad._dispatch import bind
from hookgrad._ops import select_scan as _select_scan  # noqa: F401  (registers rot90)
from hookgrad._ops._shapes import normalize_dim
from hookgrad._ops.registry import PRIMITIVES
from hookgrad._tensor import Tensor

__all__ = [
    "column_stack", "row_stack", "dstack", "hsplit", "vsplit", "dsplit", "atleast_3d",
    "diag_embed", "diagflat", "block_diag", "kron", "cross", "vdot", "tensordot",
    "cartesian_prod", "combinations", "rot90", "trapezoid", "trapz", "cumulative_trapezoid",
    "tril_indices", "triu_indices", "broadcast_shapes", "broadcast_tensors", "addmv", "addr",
    "addbmm", "chain_matmul", "matrix_power", "argwhere", "split_with_sizes", "unsafe_split",
    "unsafe_chunk", "adjoint", "vander",
]


def column_stack(tensors: Any) -> Tensor:
    """Stack 0-D/1-D tensors as columns, others along dim 1. Mirrors: ``torch.column_stack``."""
    cols = [t.reshape(-1, 1) if t.dim() <= 1 else t for t in tensors]
    return S.cat(cols, 1)


def row_stack(tensors: Any) -> Tensor:
    """Alias of ``vstack``. Mirrors: ``torch.row_stack``."""
    return S.vstack(tensors)


def atleast_3d(*tensors: Any) -> Any:
    """View inputs with at least three dimensions. Mirrors: ``torch.atleast_3d``."""
    def one(t: Tensor) -> Tensor:
        if t.dim() == 0:
            return t.reshape(1, 1, 1)
        if t.dim() == 1:
            return t.reshape(1, -1, 1)
        return t.unsqueeze(-1) if t.dim() == 2 else t
    if len(tensors) == 1 and not isinstance(tensors[0], Tensor):
        return tuple(one(t) for t in tensors[0])
    return one(tensors[0]) if len(tensors) == 1 else tuple(one(t) for t in tensors)


def dstack(tensors: Any) -> Tensor:
    """Concatenate along the third dimension. Mirrors: ``torch.dstack``."""
    return S.cat(list(atleast_3d(tuple(tensors))), 2)


def _split(input: Tensor, sections: Any, dim: int, name: str, need: int) -> tuple:
    if input.dim() < need:
        raise RuntimeError(f"torch.{name} requires a tensor with at least {need} dimension"
                           f"{'s' if need > 1 else ''}, but got a tensor with {input.dim()} "
                           "dimensions!")
    if isinstance(sections, int) and input.shape[dim] % sections:
        raise RuntimeError(f"torch.{name} attempted to split along dimension {dim}, but the "
                           f"size of the dimension {input.shape[dim]} is not divisible by the "
                           f"split_size {sections}!")
    return S.tensor_split(input, sections, dim)


def hsplit(input: Tensor, sections: Any) -> tuple:
    """Split along dim 1 (dim 0 for 1-D). Mirrors: ``torch.hsplit``."""
    return _split(input, sections, 1 if input.dim() > 1 else 0, "hsplit", 1)


def vsplit(input: Tensor, sections: Any) -> tuple:
    """Split along dim 0. Mirrors: ``torch.vsplit``."""
    return _split(input, sections, 0, "vsplit", 2)


def dsplit(input: Tensor, sections: Any) -> tuple:
    """Split along dim 2. Mirrors: ``torch.dsplit``."""
    return _split(input, sections, 2, "dsplit", 3)


def diag_embed(input: Tensor, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Tensor:
    """Batched diagonal matrices from the last dimension of `input`.

    Mirrors: ``torch.diag_embed``.
    """
    k = input.shape[-1]
    n = k + abs(offset)
    eye = np.eye(n)
    # (k, n) selectors on input's device: the row and the column of element k
    rows = C.tensor(eye[np.arange(k) - min(offset, 0)], dtype=input.dtype, device=input.device)
    cols = C.tensor(eye[np.arange(k) + max(offset, 0)], dtype=input.dtype, device=input.device)
    out = L.einsum("...k,ki,kj->...ij", input, rows, cols)
    nd = out.dim()
    d1, d2 = dim1 % nd, dim2 % nd
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    return S.movedim(out, (-2, -1), (d1, d2))


def diagflat(input: Tensor, offset: int = 0) -> Tensor:
    """2-D tensor with the flattened input on a diagonal. Mirrors: ``torch.diagflat``."""
    return M.diag(input.reshape(-1), offset)


def block_diag(*tensors: Tensor) -> Tensor:
    """Block-diagonal matrix of 0-, 1- or 2-D inputs. Mirrors: ``torch.block_diag``."""
    mats = [t.reshape(1, 1) if t.dim() == 0 else t.reshape(1, -1) if t.dim() == 1 else t
            for t in tensors]
    if not mats:
        return C.empty(1, 0)
    width = sum(m.shape[1] for m in mats)
    rows, left = [], 0
    for m in mats:
        right = width - left - m.shape[1]
        rows.append(S.cat([C.zeros(m.shape[0], left, dtype=m.dtype), m,
                           C.zeros(m.shape[0], right, dtype=m.dtype)], 1))
        left += m.shape[1]
    return S.cat(rows, 0)


def kron(input: Tensor, other: Tensor) -> Tensor:
    """Kronecker product. Mirrors: ``torch.kron``."""
    nd = max(input.dim(), other.dim())
    a = input.reshape((1,) * (nd - input.dim()) + tuple(input.shape))
    b = other.reshape((1,) * (nd - other.dim()) + tuple(other.shape))
    ai = a.reshape(sum(((s, 1) for s in a.shape), ()))
    bi = b.reshape(sum(((1, s) for s in b.shape), ()))
    return (ai * bi).reshape(tuple(x * y for x, y in zip(a.shape, b.shape)))


def cross(input: Tensor, other: Tensor, dim: int | None = None) -> Tensor:
    """Cross product of 3-vectors along `dim` (first size-3 dim when None).

    Mirrors: ``torch.cross``.
    """
    if dim is None:
        dim = next((i for i, s in enumerate(input.shape) if s == 3), None)
        if dim is None:
            raise RuntimeError("no dimension of size 3 in input")
    if input.shape[dim] != 3 or other.shape[dim] != 3:
        raise RuntimeError(f"linalg.cross: inputs dimension {dim} must have length 3. Got "
                           f"{input.shape[dim]} and {other.shape[dim]}")
    a0, a1, a2 = (input.select(dim, i) for i in range(3))
    b0, b1, b2 = (other.select(dim, i) for i in range(3))
    return S.stack([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0], dim)


def vdot(input: Tensor, other: Tensor) -> Tensor:
    """Dot product of 1-D tensors, conjugating `input` when complex. Mirrors: ``torch.vdot``."""
    return L.dot(input.conj_physical(), other)


def tensordot(a: Tensor, b: Tensor, dims: Any = 2, out: Any = None) -> Tensor:
    """Contract `dims` dimensions of `a` with those of `b`. Mirrors: ``torch.tensordot``."""
    if isinstance(dims, int):
        if dims < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
        da, db = list(range(a.dim() - dims, a.dim())), list(range(dims))
    elif isinstance(dims, Tensor):
        return tensordot(a, b, dims.tolist())
    else:
        da, db = ([dims[0]] if isinstance(dims[0], int) else list(dims[0]),
                  [dims[1]] if isinstance(dims[1], int) else list(dims[1]))
    da, db = [d % a.dim() for d in da], [d % b.dim() for d in db]
    fa = [i for i in range(a.dim()) if i not in da]
    fb = [i for i in range(b.dim()) if i not in db]
    k = int(np.prod([a.shape[i] for i in da]))
    am = a.permute(fa + da).reshape(-1, k)
    bm = b.permute(db + fb).reshape(k, -1)
    return L.mm(am, bm).reshape([a.shape[i] for i in fa] + [b.shape[i] for i in fb])


def cartesian_prod(*tensors: Tensor) -> Tensor:
    """Cartesian product of 1-D tensors. Mirrors: ``torch.cartesian_prod``."""
    if len(tensors) == 1:
        return tensors[0]
    grids = M.meshgrid(*tensors, indexing="ij")
    return S.stack([g.reshape(-1) for g in grids], 1)


def combinations(input: Tensor, r: int = 2, with_replacement: bool = False) -> Tensor:
    """Length-`r` combinations of a 1-D tensor. Mirrors: ``torch.combinations``."""
    pick = (itertools.combinations_with_replacement if with_replacement
            else itertools.combinations)
    idx = np.array(list(pick(range(input.shape[0]), r)), dtype=np.int64).reshape(-1, r)
    if idx.shape[0] == 0:
        return C.empty(0, r, dtype=input.dtype) if r > 0 else C.empty(0, dtype=input.dtype)
    return input[C.from_numpy(idx)]


def rot90(input: Tensor, k: int = 1, dims: Any = (0, 1)) -> Tensor:
    """Rotate by 90 degrees `k` times in the plane `dims`. Mirrors: ``torch.rot90``."""
    dims = tuple(dims)
    if len(dims) != 2:
        raise RuntimeError(f"expected total rotation dims == 2, but got dims = {len(dims)}")
    nd = input.dim()
    if nd < 2:
        raise RuntimeError(f"expected total dims >= 2, but got total dims = {nd}")
    d0, d1 = (normalize_dim(d, nd) for d in dims)
    if d0 == d1:
        raise RuntimeError(f"expected rotation dims to be different, but got dim0 = {d0} and "
                           f"dim1 = {d1}")
    return bind(PRIMITIVES["rot90"], (input,), {"k": k % 4, "dims": (d0, d1)})


def trapezoid(y: Tensor, x: Any = None, *, dx: Any = None, dim: int = -1) -> Tensor:
    """Trapezoidal rule along `dim`. Mirrors: ``torch.trapezoid``."""
    n = y.shape[dim]
    left, right = y.narrow(dim, 0, max(n - 1, 0)), y.narrow(dim, min(1, n), max(n - 1, 0))
    if isinstance(x, Tensor):
        if x.dim() == 1:
            shape = [1] * y.dim()
            shape[dim] = -1
            x = x.reshape(shape)
        spacing = M.diff(x, dim=dim)
        return ((left + right) * spacing).sum(dim) / 2.0
    step = 1.0 if (x is None and dx is None) else (dx if x is None else x)
    if n == 0:
        return (left + right).sum(dim) * step
    # PyTorch's constant-spacing form: (sum - (first + last) / 2) * dx (an inf at one end
    # gives inf - inf = nan there, as in PyTorch)
    ends = y.select(dim, 0) + y.select(dim, -1)  # type: ignore[attr-defined]
    return (y.sum(dim) - ends * 0.5) * step


def trapz(y: Tensor, x: Any = None, *, dx: Any = None, dim: int = -1) -> Tensor:
    """Alias of ``trapezoid``. Mirrors: ``torch.trapz``."""
    return trapezoid(y, x, dx=dx, dim=dim)


def cumulative_trapezoid(y: Tensor, x: Any = None, *, dx: Any = None, dim: int = -1) -> Tensor:
    """Cumulative trapezoidal rule along `dim`. Mirrors: ``torch.cumulative_trapezoid``."""
    n = y.shape[dim]
    avg = (y.narrow(dim, 0, max(n - 1, 0)) + y.narrow(dim, min(1, n), max(n - 1, 0))) / 2.0
    if isinstance(x, Tensor):
        if x.dim() == 1:
            shape = [1] * y.dim()
            shape[dim] = -1
            x = x.reshape(shape)
        return R.cumsum(avg * M.diff(x, dim=dim), dim)
    step = 1.0 if (x is None and dx is None) else (dx if x is None else x)
    return R.cumsum(avg * step, dim)


def _tri_indices(row: int, col: int, offset: int, fn: Any, dtype: Any) -> Tensor:
    r, c = fn(row, offset, col)
    out = C.from_numpy(np.stack([r, c]).astype(np.int64).reshape(2, -1))
    return out if dtype is None else out.to(dtype)


def tril_indices(row: int, col: int, offset: int = 0, *, dtype: Any = None, device: Any = None,
                 layout: Any = None) -> Tensor:
    """Indices of the lower triangle. Mirrors: ``torch.tril_indices``."""
    return _tri_indices(row, col, offset, np.tril_indices, dtype)


def triu_indices(row: int, col: int, offset: int = 0, *, dtype: Any = None, device: Any = None,
                 layout: Any = None) -> Tensor:
    """Indices of the upper triangle. Mirrors: ``torch.triu_indices``."""
    return _tri_indices(row, col, offset, np.triu_indices, dtype)


def broadcast_shapes(*shapes: Any) -> Any:
    """The broadcast shape of `shapes`. Mirrors: ``torch.broadcast_shapes``."""
    from hookgrad._dtypes import Size
    norm = [(s,) if isinstance(s, int) else tuple(s) for s in shapes]
    try:
        return Size(np.broadcast_shapes(*norm))
    except ValueError:
        raise RuntimeError(f"Shape mismatch: objects cannot be broadcast to a single shape. "
                           f"{norm}") from None


def broadcast_tensors(*tensors: Tensor) -> tuple:
    """Expand tensors to their common shape. Mirrors: ``torch.broadcast_tensors``."""
    shape = broadcast_shapes(*(t.shape for t in tensors))
    return tuple(t.expand(shape) for t in tensors)


def addmv(input: Tensor, mat: Tensor, vec: Tensor, *, beta: Any = 1, alpha: Any = 1,
          out: Any = None) -> Tensor:
    """beta*input + alpha*(mat @ vec). Mirrors: ``torch.addmv``."""
    return _scaled(input, L.mv(mat, vec), beta, alpha)


def addr(input: Tensor, vec1: Tensor, vec2: Tensor, *, beta: Any = 1, alpha: Any = 1,
         out: Any = None) -> Tensor:
    """beta*input + alpha*outer(vec1, vec2). Mirrors: ``torch.addr``."""
    return _scaled(input, L.outer(vec1, vec2), beta, alpha)


def addbmm(input: Tensor, batch1: Tensor, batch2: Tensor, *, beta: Any = 1, alpha: Any = 1,
           out: Any = None) -> Tensor:
    """beta*input + alpha*sum_b(batch1[b] @ batch2[b]). Mirrors: ``torch.addbmm``."""
    return _scaled(input, L.bmm(batch1, batch2).sum(0), beta, alpha)


def _scaled(input: Tensor, prod: Tensor, beta: Any, alpha: Any) -> Tensor:
    prod = prod if alpha == 1 else prod * alpha
    if beta == 0:  # PyTorch ignores input (nan/inf included) when beta is 0
        return prod + C.zeros_like(input)
    return (input if beta == 1 else input * beta) + prod


def chain_matmul(*matrices: Tensor, out: Any = None) -> Tensor:
    """Product of 2-D matrices left to right. Mirrors: ``torch.chain_matmul``."""
    if len(matrices) == 1 and not isinstance(matrices[0], Tensor):
        matrices = tuple(matrices[0])
    result = matrices[0]
    for m in matrices[1:]:
        result = L.mm(result, m)
    return result


def matrix_power(input: Tensor, n: int) -> Tensor:
    """input @ input @ ... (n >= 0; n < 0 needs the inverse). Mirrors: ``torch.matrix_power``."""
    if input.dim() < 2 or input.shape[-1] != input.shape[-2]:
        raise RuntimeError("linalg.matrix_power: A must be batches of square matrices, but "
                           f"they are {input.shape[-2]} by {input.shape[-1]} matrices")
    if n < 0:
        from hookgrad.linalg import inv
        return matrix_power(inv(input), -n)
    if n == 0:
        # identity that stays in the graph (zero gradient), as PyTorch's
        return C.eye(input.shape[-1], dtype=input.dtype) + input * 0.0
    result = input
    for _ in range(n - 1):
        result = L.matmul(result, input)
    return result


def argwhere(input: Tensor) -> Tensor:
    """Indices of non-zero elements, one row each. Mirrors: ``torch.argwhere``."""
    return M.nonzero(input)


def split_with_sizes(input: Tensor, split_sizes: Any, dim: int = 0) -> tuple:
    """Split into pieces of the given sizes. Mirrors: ``torch.split_with_sizes``."""
    if sum(split_sizes) != input.shape[dim]:
        raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to "
                           f"{input.shape[dim]} (input tensor's size at dimension {dim}), but "
                           f"got split_sizes={list(split_sizes)}")
    return tuple(S.split(input, list(split_sizes), dim))


def unsafe_split(input: Tensor, split_size: Any, dim: int = 0) -> tuple:
    """``split`` without view tracking: pieces sharing `input`'s memory that are not views for
    autograd (``UnsafeSplitBackward0``, a version counter of their own). Mirrors:
    ``torch.unsafe_split``."""
    pieces = tuple(S.split(input, split_size, dim))  # PyTorch's checks, and its pieces' count
    if not isinstance(split_size, int) or isinstance(split_size, bool) or not pieces:
        return pieces
    from hookgrad._ops.rnn import unsafe_split as _unsafe
    return tuple(_unsafe(input, split_size, normalize_dim(dim, input.dim())))


def unsafe_chunk(input: Tensor, chunks: int, dim: int = 0) -> tuple:
    """``chunk`` without view tracking. Mirrors: ``torch.unsafe_chunk``."""
    return tuple(S.chunk(input, chunks, dim))


def adjoint(input: Tensor) -> Tensor:
    """Transpose of the last two dims (real dtypes). Mirrors: ``torch.adjoint``."""
    return input.transpose(-2, -1)


def linalg_cross(input: Tensor, other: Tensor, *, dim: int = -1) -> Tensor:
    """Cross product along `dim` (default last). Mirrors: ``torch.linalg.cross``."""
    return cross(input, other, dim)


def vander(x: Tensor, N: int | None = None, increasing: bool = False) -> Tensor:
    """Vandermonde matrix of powers of a 1-D `x`. Mirrors: ``torch.vander``."""
    if x.dim() != 1:
        raise RuntimeError("x must be a one-dimensional tensor.")
    n = x.shape[0] if N is None else N
    powers = [x ** i if i else C.ones_like(x) for i in range(n)]
    cols = powers if increasing else powers[::-1]
    return S.stack(cols, 1) if cols else C.empty(x.shape[0], 0, dtype=x.dtype)
