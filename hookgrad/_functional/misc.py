"""Frequently used ops built from other ops: nonzero, unique, bincount, meshgrid, diag, trace,
repeat_interleave.

Composites get their gradients from the primitives they call (architecture.md §4: a function is a
primitive only where PyTorch shows its own grad_fn); index-valued results carry no gradient, as
in PyTorch.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from hookgrad._dtypes import check_kernel
from hookgrad._ops._checks import tensor_arguments
from hookgrad._backend import has_data, namespace_of, to_numpy
from hookgrad._config import STATE
from hookgrad._dispatch import bind
from hookgrad._ops._no_derivative import UNIQUE, UNIQUE_DIM
from hookgrad._functional.shared_memory import is_shared, share_memory_
from hookgrad._functional._gather import index_select
from hookgrad._functional._slicing import diagonal as _diagonal
from hookgrad._functional.creation import zeros_like
from hookgrad._functional.shape import cat, expand, narrow, pad, reshape
from hookgrad._ops._shapes import normalize_dim
from hookgrad._tensor import Tensor

__all__ = ["nonzero", "unique", "bincount", "meshgrid", "diag", "trace", "repeat_interleave",
           "diff"]


def _const(arr: Any) -> Tensor:
    # (not np.ascontiguousarray: it makes a 0-d array 1-d)
    arr = np.asarray(arr)
    return Tensor._make(arr if arr.flags.c_contiguous else arr.copy(order="C"))


def nonzero(input: Tensor, *, as_tuple: bool = False) -> Any:
    """Indices of non-zero elements, ``(n, ndim)`` int64 (or one tensor per dim).

    Mirrors: ``torch.nonzero``.
    """
    check_kernel("nonzero", input._data.dtype)
    if input._data.ndim == 0:  # (NumPy refuses nonzero of a 0-d array)
        n = int(bool(input._data))
        if as_tuple:  # ATen: ``self.unsqueeze(0).nonzero().unbind(1)``, a view as above
            return Tensor._make(np.zeros((1, n), dtype=np.int64).T).unbind(1)
        return _const(np.zeros((n, 0), dtype=np.int64))
    idx = namespace_of(input._data).nonzero(input._data)
    # ATen fills a (ndim, n) buffer and returns its transpose: strides (1, n); the tuple form
    # is that result's unbind(1), views of it
    full = Tensor._make(np.stack(idx, axis=0).astype(np.int64).T)
    return full.unbind(1) if as_tuple else full


def unique(input: Tensor, sorted: bool = True, return_inverse: bool = False,  # noqa: A002
           return_counts: bool = False, dim: int | None = None) -> Any:
    """Distinct elements (sorted); optionally inverse indices and counts.

    Mirrors: ``torch.unique`` (the result does not require grad, as in PyTorch).
    """
    if hasattr(input, "_bt_level"):  # under vmap: the primitive's rule raises PyTorch's error
        bind(UNIQUE if dim is None else UNIQUE_DIM, (input, input), {})
    check_kernel("unique", input._data.dtype)
    xp = namespace_of(input._data)
    if not has_data(input._data):  # no values to compare: PyTorch has no meta kernel either
        raise NotImplementedError(
            f"aten::{'_unique2' if dim is None else 'unique_dim'}: attempted to run this "
            "operator with Meta tensors, but there was no fake impl or Meta kernel registered.")
    data = to_numpy(input._data)  # a host computation (its size depends on the values)
    if dim is not None:
        dim = normalize_dim(dim, data.ndim)
        if data.size == 0:  # ATen's checks of an empty input (`_unique_dim_cpu_template`)
            if data.shape.count(0) > 1:
                raise RuntimeError("Number of zero sized dimensions is more than one, so unique "
                                   "cannot be applied ")
            if data.shape[dim] != 0:
                raise RuntimeError("There are 0 sized dimensions, and they aren't selected, so "
                                   "unique cannot be applied")
    if dim is None:
        vals, inverse, counts = _unique_flat(data)
    else:
        vals, inverse, counts = np.unique(data, return_inverse=True, return_counts=True,
                                          axis=dim)
        inverse = inverse.reshape(-1)
        # ATen sorts the slices with `dim` moved first: that dim is outermost in memory
        vals = np.moveaxis(np.ascontiguousarray(np.moveaxis(vals, dim, 0)), 0, dim)
    values = _on(xp, vals if dim is not None else _const(vals)._data)
    if input.requires_grad and STATE.grad_enabled:  # PyTorch's node whose backward raises
        values = bind(UNIQUE if dim is None else UNIQUE_DIM, (input, values), {})
    out: list = [values]
    if return_inverse:
        out.append(_on(xp, _const(inverse.astype(np.int64))._data))
    if return_counts:
        out.append(_on(xp, _const(counts.astype(np.int64))._data))
    return out[0] if len(out) == 1 else tuple(out)


def _unique_flat(data: np.ndarray) -> tuple:
    """Sorted distinct values, the inverse (in `data`'s shape) and the counts, each NaN a value
    of its own (ATen compares with ``!=``; NumPy's ``unique`` merges NaNs)."""
    flat = data.reshape(-1)
    order = np.argsort(flat, kind="stable")
    ranked = flat[order]
    starts = np.ones(ranked.size, dtype=bool)
    starts[1:] = ranked[1:] != ranked[:-1]
    group = np.cumsum(starts) - 1
    inverse = np.empty(flat.size, dtype=np.int64)
    inverse[order] = group
    bounds = np.append(np.flatnonzero(starts), ranked.size)
    return ranked[starts], inverse.reshape(data.shape), np.diff(bounds)


def _on(xp: Any, host: np.ndarray) -> Tensor:
    """A host result on the input's backend (its layout kept)."""
    return Tensor._make(host if xp is np else xp.asarray(host))


def bincount(input: Tensor, weights: Tensor | None = None, minlength: int = 0) -> Tensor:
    """Counts of each value of a 1-D non-negative int tensor. Mirrors: ``torch.bincount``."""
    check_kernel("bincount", input._data.dtype)
    if input._data.ndim != 1 or input._data.dtype.kind not in "iu":
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    if input._data.size and input._data.min() < 0:
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    if weights is None:
        return _const(np.bincount(input._data, minlength=minlength).astype(np.int64))
    w = weights._data
    res = np.bincount(input._data, weights=w, minlength=minlength)
    return _const(res.astype(w.dtype if w.dtype.kind == "f" else np.float64))


def meshgrid(*tensors: Any, indexing: str | None = None) -> tuple:
    """Coordinate grids from 1-D tensors (``indexing='ij'`` default, or ``'xy'``).

    Mirrors: ``torch.meshgrid`` (built from view + expand, so gradients flow).
    """
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    if indexing is None:
        indexing = "ij"
    if indexing not in ("ij", "xy"):
        raise RuntimeError(
            f"torch.meshgrid: indexing must be one of \"xy\" or \"ij\", but received: {indexing}"
        )
    ts = list(tensors)
    swap = indexing == "xy" and len(ts) >= 2
    if swap:
        ts[0], ts[1] = ts[1], ts[0]
    shape = tuple(t.numel() for t in ts)
    grids = []
    for i, t in enumerate(ts):
        view = [1] * len(ts)
        view[i] = -1
        grids.append(expand(reshape(t, *view), *shape))
    if swap:  # the ij grids of (y, x, ...) are the xy grids of (x, y, ...), first two swapped
        grids[0], grids[1] = grids[1], grids[0]
    return tuple(grids)


def diag(input: Tensor, diagonal: int = 0) -> Tensor:
    """1-D -> a matrix with it on the `diagonal`; 2-D -> that diagonal. Mirrors: ``torch.diag``."""
    if input._data.ndim == 2:
        return _diagonal(input, diagonal)
    if input._data.ndim != 1:
        raise RuntimeError(f"diag(): Supports 1D or 2D tensors. Got {input._data.ndim}D")
    k = diagonal
    n = input._data.shape[0] + abs(k)
    # out[i, i + k] = x[i] (k >= 0) or out[j - k, j] = x[j] (k < 0): x, zero-padded to n, times
    # a shifted identity, broadcast along rows or columns; differentiable through pad and mul.
    x = pad(input, (0, abs(k))) if k else input
    mask = Tensor._make(namespace_of(input._data).eye(n, k=k, dtype=input._data.dtype))
    return x.unsqueeze(-1) * mask if k >= 0 else x.unsqueeze(0) * mask  # type: ignore[attr-defined]


def trace(input: Tensor) -> Tensor:
    """Sum of the main diagonal of a 2-D tensor. Mirrors: ``torch.trace``."""
    if input._data.ndim != 2:
        raise RuntimeError(f"trace: expected a matrix, but got tensor with dim {input._data.ndim}")
    return _diagonal(input).sum()  # type: ignore[attr-defined]


def repeat_interleave(input: Any, repeats: Any = None, dim: int | None = None, *,
                      output_size: int | None = None) -> Tensor:
    """Repeat each element `repeats` times (along `dim`, or of the flattened tensor).

    Mirrors: ``torch.repeat_interleave`` (an ``index_select``, so gradients flow).
    """
    if repeats is None:  # repeat_interleave(repeats): indices 0..n-1 repeated
        counts = input._data.astype(np.int64)
        return _const(np.repeat(np.arange(counts.shape[0], dtype=np.int64), counts))
    x = input if dim is not None else reshape(input, -1)
    d = 0 if dim is None else dim
    n = x.shape[d]
    if dim is not None and d < 0:
        d += x.dim()
    if isinstance(repeats, int):  # as PyTorch: unsqueeze, expand, clone, view (no index saved)
        wide = list(x.shape[: d + 1]) + [repeats] + list(x.shape[d + 1:])
        out_shape = list(x.shape[:d]) + [n * repeats] + list(x.shape[d + 1:])
        return x.unsqueeze(d + 1).expand(*wide).clone().view(*out_shape)
    reps = repeats._data if isinstance(repeats, Tensor) else repeats
    if np.ndim(reps) and np.size(reps) != n and np.size(reps) != 1:
        raise RuntimeError("repeats must have the same size as input along dim")
    idx = np.repeat(np.arange(n, dtype=np.int64), np.asarray(reps).reshape(-1)
                    if np.ndim(reps) else int(reps))
    return index_select(x, d, Tensor._make(idx))


def diff(input: Tensor, n: int = 1, dim: int = -1, prepend: Tensor | None = None,
         append: Tensor | None = None) -> Tensor:
    """n-th forward difference along `dim` (``SubBackward0`` of two narrows, as PyTorch).

    Mirrors: ``torch.diff``.
    """
    if n < 0:
        raise RuntimeError(f"order must be non-negative but got {n}")
    if n == 0:  # ATen's diff_helper: zeros_like(self).copy_(self) (prepend/append ignored),
        # a fresh tensor (``CopyBackwards``) in the input's layout, never the input itself
        return zeros_like(input).copy_(input)  # type: ignore[attr-defined]
    x = input
    if prepend is not None or append is not None:
        parts = [t for t in (prepend, input, append) if t is not None]
        x = cat(parts, dim)
    for _ in range(n):
        length = x.shape[dim]
        if length == 0:
            break
        x = narrow(x, dim, 1, length - 1) - narrow(x, dim, 0, length - 1)  # type: ignore[operator]
    return x


@tensor_arguments
def type_as(self: Tensor, other: Tensor) -> Tensor:
    """This tensor cast to `other`'s dtype. Mirrors: ``torch.Tensor.type_as``."""
    return self.to(other.dtype)  # type: ignore[attr-defined]


def cuda(self: Tensor, device: Any = None, non_blocking: bool = False) -> Tensor:
    """Move to a CUDA device. Mirrors: ``torch.Tensor.cuda`` (CPU-only build: PyTorch's error)."""
    raise AssertionError("Torch not compiled with CUDA enabled")


def _itself(self: Tensor, *args: Any, **kwargs: Any) -> Tensor:
    """For a real CPU tensor ``conj`` and ``pin_memory`` return it unchanged.

    Mirrors: ``torch.Tensor.conj`` / ``pin_memory`` on CPU real tensors.
    """
    return self


METHODS = {
    "nonzero": nonzero, "unique": unique, "bincount": bincount, "diag": diag, "trace": trace,
    "repeat_interleave": repeat_interleave, "diff": diff, "type_as": type_as, "cuda": cuda,
    "share_memory_": share_memory_, "is_shared": is_shared, "pin_memory": _itself,
}
