"""Memory formats: which strides ``contiguous_format``, ``channels_last`` and
``channels_last_3d`` mean, and PyTorch's rules for choosing one.

Layer 1 (NumPy only). A memory format is a dim order: ``channels_last`` stores an NCHW tensor
as NHWC (channels fastest), ``channels_last_3d`` stores NCDHW as NDHWC. PyTorch's rules:

* ``t.is_contiguous(memory_format=f)``: the strides are exactly the dense strides of `f`'s dim
  order, ignoring dims of size 1 (c10's ``compute_channels_last_contiguous_2d``);
* ``preserve_format`` (the default of ``clone``, ``to`` and the ``*_like`` factories): a
  non-overlapping, dense input keeps its strides; any other strided input gets dense strides in
  the order of its own (``infer_dense_strides``, `_inferred_strides`); the format its strides
  *suggest* (``suggest_memory_format``: channels-last-like strides give ``channels_last``, else
  row-major) is what other layouts get;
* layers that compute per channel over NCHW data (convolution, batch norm, pooling, upsampling)
  give their result in the suggested format of their input (see ``SUGGESTED`` in
  ``_ops/_layout.py``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from hookgrad._backend import backend_of

__all__ = ["dense_strides", "format_name", "slow_to_fast", "is_contiguous_as", "suggest", "as_format",
           "preserved", "check_rank", "empty_for", "copy_as"]

_ndarray = np.ndarray
# dims from slowest to fastest
_ORDERS = {("channels_last", 4): (0, 2, 3, 1), ("channels_last_3d", 5): (0, 2, 3, 4, 1)}
_RANKS = {"channels_last": 4, "channels_last_3d": 5}


def format_name(memory_format: Any) -> str:
    """``'contiguous_format'``, ``'channels_last'``, ``'channels_last_3d'`` or
    ``'preserve_format'`` (the default: ``None``) of a ``torch.memory_format``."""
    if memory_format is None:
        return "preserve_format"
    name = memory_format if isinstance(memory_format, str) else getattr(
        memory_format, "name", None)
    if name not in ("contiguous_format", "channels_last", "channels_last_3d",
                    "preserve_format"):
        raise TypeError(f"expected a torch.memory_format, got {type(memory_format).__name__}")
    return name


def check_rank(name: str, ndim: int) -> None:
    """PyTorch's RuntimeError for ``channels_last`` on a tensor that is not 4-D (5-D for 3d)."""
    rank = _RANKS.get(name)
    if rank is not None and ndim != rank:
        raise RuntimeError(f"required rank {rank} tensor to use {name} format")


def slow_to_fast(name: str, ndim: int) -> tuple:
    """The dim order of format `name` for an `ndim`-D tensor, slowest dim first."""
    return _ORDERS.get((name, ndim), tuple(range(ndim)))


def is_contiguous_as(arr: Any, name: str) -> bool:
    """Whether `arr`'s strides are the dense strides of format `name` (size-1 dims ignored;
    ``preserve_format`` asks for row-major, as PyTorch's ``is_contiguous`` reads it)."""
    if name in ("contiguous_format", "preserve_format"):
        return bool(arr.flags.c_contiguous)
    if (name, arr.ndim) not in _ORDERS or (type(arr) is not _ndarray
                                           and backend_of(arr).has_data):
        return False
    expected = arr.itemsize
    for d in reversed(_ORDERS[(name, arr.ndim)]):
        n = arr.shape[d]
        if n != 1:
            if arr.strides[d] != expected:
                return False
            expected *= n
    return True


def _strides_like(arr: Any, order: tuple) -> bool:
    # c10's is_channels_last_strides_2d/3d: strides grow along `order` read fastest first;
    # an ambiguous N111-like tensor counts as row-major
    strides, shape = arr.strides, arr.shape
    if strides[1] == 0:
        return False
    smallest = 0
    for d in reversed(order):
        if shape[d] == 0 or strides[d] < smallest:
            return False
        if d == 0 and smallest == strides[1]:
            return False
        smallest = strides[d] * (shape[d] if shape[d] > 1 else 1)
    return True


def suggest(arr: Any) -> str:
    """PyTorch's ``suggest_memory_format``: the channels-last format `arr`'s strides follow."""
    if type(arr) is not _ndarray or arr.flags.c_contiguous:
        return "contiguous_format"
    for name in ("channels_last", "channels_last_3d"):
        order = _ORDERS.get((name, arr.ndim))
        if order is not None and _strides_like(arr, order):
            return name
    return "contiguous_format"


def dense_strides(shape: tuple, order: tuple, itemsize: int) -> tuple:
    """Byte strides of a dense array of `shape` whose dims run slowest-to-fastest as `order`
    (dims of size 1 get the stride PyTorch gives them: the product of the faster sizes)."""
    out = [0] * len(shape)
    step = itemsize
    for d in reversed(order):
        out[d] = step
        step *= max(shape[d], 1)
    return tuple(out)


def as_format(arr: Any, name: str) -> Any:
    """`arr` laid out densely in format `name` (`arr` itself when it already is)."""
    if type(arr) is not _ndarray and not backend_of(arr).has_data:
        # meta: the layout is all there is to make (`copy_as` below)
        return arr if is_contiguous_as(arr, name) else copy_as(arr, name)
    if type(arr) is not _ndarray:
        return arr
    order = slow_to_fast(name, arr.ndim)
    if is_contiguous_as(arr, name):
        want = dense_strides(arr.shape, order, arr.itemsize)
        if arr.strides == want or arr.size == 0:
            return arr
        # only size-1 dims differ: the same memory, restrided as PyTorch strides them
        return np.lib.stride_tricks.as_strided(arr, arr.shape, want)
    inverse = [0] * len(order)
    for i, d in enumerate(order):
        inverse[d] = i
    return np.ascontiguousarray(arr.transpose(order)).transpose(inverse)


def _dense(arr: Any) -> bool:
    expected = arr.itemsize
    for st, n in sorted((st, n) for st, n in zip(arr.strides, arr.shape) if n != 1):
        if st != expected:
            return False
        expected *= n
    return True


def preserved(arr: Any) -> str | None:
    """What ``preserve_format`` does with `arr`: ``None`` keeps its strides (it is dense and
    non-overlapping), otherwise the format name to lay the result out in."""
    if type(arr) is not _ndarray or arr.flags.c_contiguous:
        return "contiguous_format"
    if _dense(arr):
        return None
    return suggest(arr)


def _inferred_strides(arr: Any) -> list:
    """Element strides of a dense array keeping the dim order of `arr`'s strides: c10's
    ``infer_dense_strides`` (an insertion sort from the last dim; a dim of stride 0 stays where
    it is, equal strides put the smaller size first)."""
    shape, strides = arr.shape, [st // arr.itemsize for st in arr.strides]
    perm = list(range(arr.ndim - 1, -1, -1))  # fastest first

    def after(d0: int, d1: int) -> int:  # 1: d0 goes after d1, -1: before, 0: either
        s0, s1 = strides[d0], strides[d1]
        if s0 == 0 or s1 == 0:
            return 0
        if s0 != s1:
            return -1 if s0 < s1 else 1
        return 1 if shape[d0] > shape[d1] else 0

    for i in range(1, arr.ndim):
        d1 = i
        for d0 in range(i - 1, -1, -1):
            c = after(perm[d0], perm[d1])
            if c > 0:
                perm[d0], perm[d1] = perm[d1], perm[d0]
                d1 = d0
            elif c < 0:
                break
    out, step = [0] * arr.ndim, 1
    for d in perm:
        out[d] = step
        step *= max(shape[d], 1)
    return out


def empty_for(arr: Any, name: str, dtype: Any = None) -> Any:
    """An empty array of `arr`'s shape laid out as format `name` asks (``preserve_format``:
    PyTorch's rule above; a kept layout copies `arr`'s strides exactly, size-1 dims too)."""
    dtype = arr.dtype if dtype is None else np.dtype(dtype)
    if name == "preserve_format":
        name = preserved(arr) or ""
        if not name:
            buf = np.empty(arr.size, dtype)
            strides = tuple(st // arr.itemsize * dtype.itemsize for st in arr.strides)
            return np.lib.stride_tricks.as_strided(buf, arr.shape, strides)
        if type(arr) is _ndarray and min(arr.strides, default=0) >= 0:
            buf = np.empty(arr.size, dtype)
            return np.lib.stride_tricks.as_strided(buf, arr.shape, tuple(
                st * dtype.itemsize for st in _inferred_strides(arr)))
    order = slow_to_fast(name, arr.ndim)
    if arr.size == 0 or 1 in arr.shape:
        buf = np.empty(arr.size, dtype)
        return np.lib.stride_tricks.as_strided(buf, arr.shape, dense_strides(
            arr.shape, order, dtype.itemsize))
    out = np.empty(tuple(arr.shape[d] for d in order), dtype)
    inverse = [0] * len(order)
    for i, d in enumerate(order):
        inverse[d] = i
    return out.transpose(inverse)


def copy_as(arr: Any, name: str, dtype: Any = None) -> Any:
    """A copy of `arr` laid out as `empty_for` lays it out."""
    if type(arr) is not _ndarray and not backend_of(arr).has_data:
        # no values to copy (meta): only the layout, by PyTorch's rule
        return backend_of(arr).empty_for(arr, name, arr.dtype if dtype is None else dtype)
    if type(arr) is not _ndarray:  # another backend's array: its own copy, in NumPy's orders
        keep = name == "preserve_format" and _dense(arr)
        out = arr.copy(order="K" if keep else "C")
        return out if dtype is None else out.astype(dtype)
    out = empty_for(arr, name, dtype)
    out[...] = arr
    return out
