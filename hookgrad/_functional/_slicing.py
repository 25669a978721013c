"""Slicing views: narrow, select, unbind, split/chunk/tensor_split, diagonal, as_strided.

Mirrors the ``torch`` functions of the same names; re-exported by `hookgrad._functional.shape`.
"""

from __future__ import annotations

import operator
from typing import Any

from hookgrad._ops._checks import int_args
from hookgrad._functional._views import _dim, _multi_view, _view
from hookgrad._ops import shape as _S
from hookgrad._ops.registry import PRIMITIVES as P
from hookgrad._tensor import Tensor

__all__ = ["narrow", "select", "unbind", "split", "split_method", "chunk", "tensor_split", "diagonal", "as_strided"]


def _index_arg(value: Any, fn: str, name: str) -> int:
    """An int argument (or a 0-dim integer tensor), PyTorch's TypeError otherwise."""
    try:
        return operator.index(value)
    except TypeError:
        raise TypeError(f"{fn}(): argument '{name}' must be int, not "
                        f"{type(value).__name__}") from None


def narrow(input: Tensor, dim: int, start: Any, length: int) -> Tensor:
    """Mirrors: ``torch.narrow`` (a ``SliceBackward0`` view)."""
    if input._data.ndim == 0:
        raise RuntimeError("narrow() cannot be applied to a 0-dim tensor.")
    d = _dim(dim, input)
    size = input._data.shape[d]
    if isinstance(start, Tensor) and (start._data.ndim or start._data.dtype.kind not in "iu"):
        raise RuntimeError("start must be an 0-dim integral Tensor.")
    start = _index_arg(start, "narrow", "start")
    if not -size <= start <= size:
        raise IndexError(
            f"start out of range (expected to be in range of [{-size}, {size}], but got {start})"
        )
    if start < 0:
        start += size
    if length < 0 or start > size - length:
        raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size ({size}).")
    return slice_dim(input, d, start, start + length, 1)


def slice_dim(input: Tensor, dim: int, start: int, end: int, step: int) -> Tensor:
    """The ``slice`` view with already normalized, clamped bounds."""
    return _view(P["slice"], input, {"dim": dim, "start": start, "end": end, "step": step})


def select(input: Tensor, dim: int, index: Any) -> Tensor:
    """Mirrors: ``torch.select``."""
    if input._data.ndim == 0:
        raise IndexError("select() cannot be applied to a 0-dim tensor.")
    d = _dim(dim, input)
    size = input._data.shape[d]
    i = int_args((index,), "select", "index")[0]
    if not -size <= i < size:
        raise IndexError(
            f"select(): index {i} out of range for tensor of size {list(input._data.shape)} at "
            f"dimension {d}"
        )
    return _view(P["select"], input, {"dim": d, "index": i % size})


def unbind(input: Tensor, dim: int = 0) -> tuple:
    """Mirrors: ``torch.unbind`` (views that must not be modified in place)."""
    if input._data.ndim == 0:
        raise IndexError("Dimension specified as 0 but tensor has no dimensions")
    return _multi_view(P["unbind"], input, {"dim": _dim(dim, input)})


def split(tensor: Tensor, split_size_or_sections: Any, dim: int = 0) -> tuple:
    """Mirrors: ``torch.split`` (an int: equal pieces; a list: ``split_with_sizes``)."""
    if tensor._data.ndim == 0:
        raise RuntimeError("split expects at least a 1-dimensional tensor")
    d = _dim(dim, tensor)
    size = tensor._data.shape[d]
    if isinstance(split_size_or_sections, (list, tuple)):
        sizes = int_args(split_size_or_sections, "split_with_sizes", "split_sizes")
        if sum(sizes) != size or any(s < 0 for s in sizes):
            raise RuntimeError(
                f"split_with_sizes expects split_sizes to sum exactly to {size} (input tensor's "
                f"size at dimension {d}), but got split_sizes={list(sizes)}"
            )
        return _multi_view(P["split_with_sizes"], tensor, {"split_sizes": sizes, "dim": d})
    n = int_args((split_size_or_sections,), "split_with_sizes", "split_sizes")[0]
    if n < 0 or (n == 0 and size != 0):
        raise RuntimeError(
            f"split_size can only be 0 if dimension size is 0, but got dimension size of {size}"
            if n == 0
            else f"split expects split_size be non-negative, but got split_size={n}"
        )
    return _multi_view(P["split"], tensor, {"split_size": n, "dim": d})



def split_method(self: Tensor, split_size: Any, dim: int = 0) -> tuple:
    """``torch.split`` as a method, with the method's argument name. Mirrors:
    ``torch.Tensor.split``."""
    return split(self, split_size, dim)

def chunk(input: Tensor, chunks: int, dim: int = 0) -> tuple:
    """Mirrors: ``torch.chunk``."""
    if input._data.ndim == 0:
        raise RuntimeError("chunk expects at least a 1-dimensional tensor")
    chunks = _index_arg(chunks, "chunk", "chunks")
    if chunks <= 0:
        raise RuntimeError(f"chunk expects `chunks` to be greater than 0, got: {chunks}")
    d = _dim(dim, input)
    size = input._data.shape[d]
    split_size = (size + chunks - 1) // chunks
    if split_size == 0 and size == 0:
        return split(input, [0] * chunks, d)
    return split(input, split_size, d)


def tensor_split(input: Tensor, indices_or_sections: Any, dim: int = 0) -> tuple:
    """Mirrors: ``torch.tensor_split`` (``SliceBackward0`` views)."""
    d = _dim(dim, input)
    size = input._data.shape[d]
    if isinstance(indices_or_sections, int):
        n = indices_or_sections
        if n <= 0:
            raise RuntimeError(f"number of sections must be larger than 0, got {n}")
        q, r = divmod(size, n)
        bounds, start = [], 0
        for i in range(n):
            stop = start + q + (1 if i < r else 0)
            bounds.append((start, stop))
            start = stop
    else:
        cuts = [min(max(int(i) if i >= 0 else int(i) + size, 0), size) for i in indices_or_sections]
        edges = [0] + cuts + [size]
        bounds = [(a, max(a, b)) for a, b in zip(edges[:-1], edges[1:], strict=False)]
    return tuple(slice_dim(input, d, a, b, 1) for a, b in bounds)


def diagonal(input: Tensor, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Tensor:
    """Mirrors: ``torch.diagonal`` (a writable view)."""
    d1, d2 = _dim(dim1, input), _dim(dim2, input)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    return _view(P["diagonal"], input, {"offset": int(offset), "dim1": d1, "dim2": d2})


def as_strided(input: Tensor, size: Any, stride: Any, storage_offset: Any = None) -> Tensor:
    """Mirrors: ``torch.as_strided`` (offsets count from the first element of the base).

    See NOTE [Storage offsets] in ``hookgrad/_ops/shape.py``.
    """
    size, stride = tuple(int(s) for s in size), tuple(int(s) for s in stride)
    if len(size) != len(stride):
        raise RuntimeError("mismatch in length of strides and shape")
    own = storage_offset_of(input)
    offset = own if storage_offset is None else int(storage_offset)
    store = input._storage_data()
    need = (
        offset + 1 + sum((n - 1) * s for n, s in zip(size, stride, strict=False))
        if all(size)
        else 0
    )
    if need > store.size or offset < 0:
        raise RuntimeError(
            f"setStorage: sizes {list(size)}, strides {list(stride)}, storage offset {offset}, "
            f"and itemsize {input._data.itemsize} requiring a storage size of "
            f"{need * input._data.itemsize} are out of bounds for storage of size "
            f"{store.size * input._data.itemsize}"
        )
    params = {
        "size": size,
        "stride": stride,
        "storage_offset": offset - own,
        "self_geometry": _S.element_strides(input._data),
    }
    return _view(P["as_strided"], input, params)


def storage_offset_of(t: Tensor) -> int:
    """Mirrors: ``torch.Tensor.storage_offset`` (elements from the first element of the base,
    or of the storage array a loaded tensor lies in: NOTE [Storage arrays] in ``_tensor.py``)."""
    from hookgrad._backend import element_offset

    base = t._base
    store = t._storage_data()
    if store is (t if base is None else base)._data:
        return 0 if base is None else int(element_offset(t._data, base._data))
    offset = int(element_offset(t._data, store))
    return offset if 0 <= offset <= store.size else 0  # an empty non-view may point anywhere
