"""A tensor as ``(storage, storage offset, size, stride)``: how every serializer writes it.

PyTorch writes a tensor as its whole storage plus the offset, sizes and strides of the tensor
in it, so a ``[2:5]`` slice of a 10-element tensor saves 10 elements and loads with
``storage_offset() == 2``, and tensors sharing a storage load sharing one again. `hookgrad.save`,
`hookgrad.package`, pickling and ``copy.deepcopy`` all do the same through this module: the
storage is the one ``untyped_storage()`` reports (NOTE [Storage arrays] in ``_tensor.py``),
written flat in memory order, and a loaded tensor is an ``as_strided`` view of the loaded flat
array that records it as its ``_storage_array`` (a leaf, not an autograd view, as in PyTorch).

A tensor whose storage cannot be written as one flat array (a strided NumPy array under
``from_numpy``, negative strides, another dtype) is written alone as a contiguous copy.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from hookgrad import _backend
from hookgrad._tensor import Tensor


class Layout(NamedTuple):
    """Where a tensor lies: `store` (the storage array, the key of sharing), `flat` (its
    elements in memory order, 1-D), element `offset` and `stride` of the tensor in `flat`."""

    store: Any
    flat: Any
    offset: int
    stride: tuple


def _contiguous_strides(size: tuple) -> tuple:
    out, acc = [], 1
    for n in reversed(size):
        out.append(acc)
        acc *= max(n, 1)
    return tuple(reversed(out))


def _extent_fits(size: tuple, stride: tuple, offset: int, numel: int) -> bool:
    """Whether every element of the layout lies inside a storage of `numel` elements."""
    if offset < 0 or any(s < 0 for s in stride) or any(n < 0 for n in size):
        return False
    if 0 in size:
        return offset <= numel
    return offset + sum((n - 1) * s for n, s in zip(size, stride, strict=True)) < numel


def _in_store(arr: Any, store: Any) -> Layout | None:
    """`arr`'s layout inside `store`, or None when it cannot be expressed in elements."""
    if store.dtype != arr.dtype or type(store) is not type(arr):
        return None
    if not (store.flags.c_contiguous or store.flags.f_contiguous):
        return None
    item = arr.itemsize
    if item == 0 or any(s % item for s in arr.strides):
        return None
    flat = store.reshape(-1, order="A")  # a view: memory order of a contiguous array
    offset = int(_backend.element_offset(arr, flat))
    if arr.size == 0:
        stride = _contiguous_strides(tuple(arr.shape))
        return Layout(store, flat, offset if 0 <= offset <= flat.size else 0, stride)
    stride = tuple(s // item for s in arr.strides)
    if not _extent_fits(tuple(arr.shape), stride, offset, int(flat.size)):
        return None
    return Layout(store, flat, offset, stride)


def storage_layout(t: Tensor) -> Layout:
    """The storage of `t` and where `t` lies in it (on `t`'s device; see the module doc)."""
    arr = t._data
    layout = _in_store(arr, t._storage_data())
    if layout is not None:
        return layout
    xp = _backend.namespace_of(arr)
    copy = xp.ascontiguousarray(arr).reshape(-1)  # written alone
    return Layout(copy, copy, 0, _contiguous_strides(tuple(arr.shape)))


def storage_view(flat: Any, offset: int, size: Any, stride: Any) -> Any:
    """The ``as_strided`` view of the 1-D array `flat` for one tensor, after checking that the
    layout stays inside `flat` (a bad one raises PyTorch's ``setStorage`` RuntimeError)."""
    size, stride = tuple(size), tuple(stride)
    ok = (all(type(v) is int for v in (offset, *size, *stride)) and len(size) == len(stride)
          and getattr(flat, "ndim", None) == 1)
    if not ok or not _extent_fits(size, stride, offset, int(flat.size)):
        raise RuntimeError(
            f"setStorage: sizes {list(size)}, strides {list(stride)}, storage offset {offset} "
            f"do not fit in a storage of {getattr(flat, 'size', '?')} elements")
    item = flat.itemsize
    return _backend.backend_of(flat).as_strided(flat[offset:], size,
                                                tuple(s * item for s in stride))


def tensor_on_storage(flat: Any, offset: int, size: Any, stride: Any,
                      requires_grad: bool = False, cls: type | None = None,
                      store: Any = None) -> Tensor:
    """A leaf tensor (of class `cls`) lying in the storage `flat` (NOTE [Storage arrays]).

    `store`: the array recorded as the storage when `flat` is a flattening of it (tensors
    sharing a storage must record the same object, the key writers share storages by).
    """
    t = (Tensor if cls is None else cls)._make(storage_view(flat, offset, size, stride),
                                               bool(requires_grad))
    t._storage_array = flat if store is None else store
    return t
