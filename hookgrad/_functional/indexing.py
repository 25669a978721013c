"""Indexing: ``__getitem__``/``__setitem__``/``__iter__``, gather/scatter, index_select & co.

Mirrors the ``torch`` functions of the same names.

NOTE [Indexing like PyTorch]
``t[idx]`` follows PyTorch's ``THPVariable_getitem``: an int, a slice, ``None`` or ``...``
alone take fast paths (``x[:]`` is a ``SliceBackward0`` view, ``x[...]`` an ``AliasBackward0``
view); otherwise the index is walked left to right applying *views* (``select`` for ints and
0-d integer tensors, ``slice`` for slices other than a full ``:``, ``unsqueeze`` for ``None``
and Python bools) and collecting *advanced* indices (integer or boolean tensors, lists) per
dim; if any were collected, one ``index`` primitive (``IndexBackward0``) finishes the job.
``t[idx] = v`` (``THPVariable_setitem``) applies the same views, then writes with
``copy_``/``fill_`` into the view (so an indexed base gets ``CopySlices``), or with
``index_put_`` (``IndexPutBackward0``) when advanced indices are present.
"""

from __future__ import annotations

import numbers
import operator
import warnings
from typing import Any

import numpy as np

from hookgrad._dtypes import check_scalar_fits
from hookgrad import _backend
from hookgrad._dispatch import _may_share, _partial_overlap, bind, bind_inplace, \
    has_internal_overlap
from hookgrad._functional import shape as _shape
from hookgrad._functional._gather import METHODS as _GATHER_METHODS
from hookgrad._functional.random import _check_inplace
from hookgrad._functional._gather import (  # noqa: F401 - re-exported public ops
    gather,
    index_add,
    index_select,
    masked_select,
    scatter,
    scatter_add,
    take,
    take_along_dim,
)
from hookgrad._ops.indexing import np_index, with_originals
from hookgrad._ops.registry import PRIMITIVES as P
from hookgrad._tensor import Tensor

__all__ = [
    "gather",
    "scatter",
    "scatter_add",
    "index_select",
    "index_add",
    "index_put",
    "take",
    "take_along_dim",
    "masked_select",
]

_SEQ_WARNING = (
    "Using a non-tuple sequence for multidimensional indexing is deprecated and will be changed "
    "in pytorch 2.9; use x[tuple(seq)] instead of x[seq]. In pytorch 2.9 this will be "
    "interpreted as tensor index, x[torch.tensor(seq)], which will result either in an error or "
    "a different result"
)
_VALID = (
    "only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables are "
    "valid indices (got {})"
)


# ---------------------------------------------------------------------------- index parsing
def _as_tuple(index: Any) -> tuple:
    """PyTorch's ``treatSequenceAsTuple`` (NumPy's legacy heuristic for lists)."""
    if isinstance(index, tuple):
        return index
    if isinstance(index, list) and len(index) < 32:
        for obj in index:
            if isinstance(obj, (Tensor, list, tuple, slice)) or obj is None or obj is Ellipsis:
                warnings.warn(_SEQ_WARNING, UserWarning, stacklevel=3)
                return tuple(index)
    return (index,)


def _is_int(obj: Any) -> bool:
    if isinstance(obj, bool):
        return False
    if isinstance(obj, (int, np.integer)):
        return True
    return isinstance(obj, Tensor) and obj._data.ndim == 0 and obj._data.dtype.kind in "iu"


_INT64_MAX = (1 << 63) - 1
_UINT8_MASK_WARNING = ("indexing with dtype torch.uint8 is now deprecated, please use a dtype "
                       "torch.bool instead.")


def _data_index(obj: Any) -> np.ndarray:
    """PyTorch's ``indexing_tensor_from_data``: a list, tuple, bytes or NumPy array given as
    an index becomes a tensor. Bool and uint8 data keep their dtype (masks); anything else is
    converted to int64, floats truncated, with PyTorch's errors for what cannot be."""
    if isinstance(obj, (list, tuple, range)) and len(obj) == 0:
        return np.zeros(0, dtype=np.int64)
    arr = obj if isinstance(obj, np.ndarray) else np.asarray(obj)
    kind = arr.dtype.kind
    if kind == "O":
        bad = next((v for v in arr.reshape(-1) if not isinstance(v, (int, float, bool))), None)
        if bad is not None:
            raise TypeError(f"new(): invalid data type '{type(bad).__name__}'")
        raise ValueError("Overflow when unpacking long long")  # Python ints beyond int64
    if kind in "USVMm":
        name = {"U": "str", "S": "bytes"}.get(kind, arr.dtype.name)
        raise TypeError(f"new(): invalid data type '{name}'")
    if kind == "u" and arr.dtype.itemsize == 8 and arr.size and int(arr.max()) > _INT64_MAX:
        raise ValueError("Overflow when unpacking long long")
    if kind == "f":
        if arr.size and not (np.isfinite(arr).all() and np.abs(arr).max() < 2.0 ** 63):
            raise RuntimeError("value cannot be converted to type int64 without overflow")
        return arr.astype(np.int64)
    return arr


def _index_array(obj: Any) -> np.ndarray:
    """An advanced index as a host array of int64 or bool (a uint8 index is a mask)."""
    if isinstance(obj, Tensor) and not _backend.has_data(obj._data):
        arr = obj._data  # a meta index: its shape is all indexing needs
    elif isinstance(obj, Tensor):
        arr = _backend.to_numpy(obj._data)
    else:
        arr = _data_index(obj)
    if arr.dtype.kind == "b":
        return arr
    if arr.dtype == np.uint8:
        warnings.warn(_UINT8_MASK_WARNING, UserWarning, stacklevel=4)
        return arr.astype(bool)
    if arr.dtype.kind in "iu":
        return arr.astype(np.int64, copy=False)
    raise IndexError("tensors used as indices must be long, int, byte or bool tensors")


def _specified_dims(idx: tuple) -> int:
    count = 0
    for obj in idx:
        if obj is None or obj is Ellipsis or isinstance(obj, bool):
            continue
        if isinstance(obj, Tensor) and (obj._data.dtype.kind == "b" or
                                        obj._data.dtype == np.uint8):  # masks
            count += obj._data.ndim
        else:
            count += 1
    return count


def _apply_slice(t: Tensor, dim: int, s: slice, optimize: bool) -> Tensor:
    size = t._data.shape[dim]
    step = 1 if s.step is None else operator.index(s.step)  # 1.5 is Python's TypeError
    if step <= 0:
        raise ValueError(
            "slice step cannot be zero" if step == 0 else "step must be greater than zero"
        )
    start, stop, _ = slice(s.start, s.stop, step).indices(size)
    stop = max(stop, start)
    # PyTorch skips the slice on the numbers as written: a start of 0 (or None) and a stop
    # of at least the size; a negative start reaching back to 0 still records SliceBackward0
    if optimize and step == 1 and (s.start is None or operator.index(s.start) == 0) and (
            s.stop is None or operator.index(s.stop) >= size):
        return t
    return _shape.slice_dim(t, dim, start, stop, step)


def _select_int(t: Tensor, dim: int, i: int) -> Tensor:
    if t._data.ndim == 0:
        raise IndexError(
            "invalid index of a 0-dim tensor. Use `tensor.item()` in Python or "
            "`tensor.item<T>()` in C++ to convert a 0-dim tensor to a number"
        )
    size = t._data.shape[dim]
    if not -size <= i < size:
        if not -_INT64_MAX - 1 <= i <= _INT64_MAX:  # PyTorch cannot even read it
            raise ValueError("Overflow when unpacking long long")
        raise IndexError(f"index {i} is out of bounds for dimension {dim} with size {size}")
    return _shape._view(P["select"], t, {"dim": dim, "index": i % size})


def _record_advanced(t: Tensor, dim: int, obj: Any, adv: dict) -> int:
    """Store advanced index `obj` at `dim`; returns how many dims it consumed."""
    arr = _index_array(obj)
    # what PyTorch's index node saves: the tensor given, or the list made a tensor
    adv.setdefault("originals", []).append(obj if isinstance(obj, Tensor) else Tensor._make(arr))
    shape = t._data.shape
    if arr.dtype.kind == "b":
        for k, n in enumerate(arr.shape):
            if dim + k >= len(shape) or shape[dim + k] != n:
                raise IndexError(
                    f"The shape of the mask {list(arr.shape)} at index {k} does not match the "
                    f"shape of the indexed tensor {list(shape)} at index {dim + k}"
                )
        for k, where in enumerate(np.nonzero(arr)):
            adv[dim + k] = where
        return arr.ndim
    size = shape[dim]
    if arr.size and _backend.has_data(arr):
        bad = arr[(arr < -size) | (arr >= size)]
        if bad.size:
            # PyTorch numbers the dimension among the advanced indices only (`adv` also holds
            # the "originals" entry).
            raise IndexError(
                f"index {int(bad.reshape(-1)[0])} is out of bounds for dimension {len(adv) - 1} with "
                f"size {size}"
            )
    adv[dim] = arr
    return 1


def apply_slicing(t: Tensor, idx: tuple, optimize: bool) -> tuple:
    """Apply the view part of an index; returns ``(view, {dim: advanced index array})``."""
    ndim = t._data.ndim
    specified = _specified_dims(idx)
    if specified > ndim:
        raise IndexError(f"too many indices for tensor of dimension {ndim}")
    result, dim, adv = t, 0, {}
    seen_ellipsis = False
    for obj in idx:
        if obj is Ellipsis:
            if not seen_ellipsis:
                dim += ndim - specified
            seen_ellipsis = True
        elif obj is None:
            result = _shape.unsqueeze(result, dim)
            dim += 1
        elif isinstance(obj, bool) or (
            isinstance(obj, Tensor) and obj._data.ndim == 0 and obj._data.dtype.kind == "b"
        ):
            result = _shape.unsqueeze(result, dim)
            adv[dim] = np.zeros(1 if bool(obj) else 0, dtype=np.int64)
            # PyTorch indexes with this int64 tensor, so its index node saves it
            adv.setdefault("originals", []).append(Tensor._make(adv[dim]))
            dim += 1
        elif _is_int(obj):
            try:
                i = int(obj)
            except RuntimeError:  # a vmapped 0-d index has one value per sample: advanced
                dim += _record_advanced(result, dim, obj, adv)
            else:
                result = _select_int(result, dim, i)
        elif isinstance(obj, slice):
            result = _apply_slice(result, dim, obj, optimize)
            dim += 1
        elif isinstance(obj, (Tensor, list, tuple, range, np.ndarray, bytes)):
            dim += _record_advanced(result, dim, obj, adv)
        elif isinstance(obj, str):  # PyTorch reads a str as a sequence index: tensor('a')
            raise TypeError("new(): invalid data type 'str'")
        else:
            raise IndexError(_VALID.format(type(obj).__name__))
    return result, adv


def _indices(t: Tensor, adv: dict) -> tuple:
    """The ``indices`` param of ``index``/``index_put``: None for dims not indexed."""
    originals = adv.pop("originals", [])
    last = max(adv)
    out = tuple(adv.get(d) for d in range(last + 1))
    try:
        np.broadcast_shapes(*[a.shape for a in out if a is not None])
    except ValueError:
        shapes = ", ".join(str(list(a.shape)) for a in out if a is not None)
        raise IndexError(
            f"shape mismatch: indexing tensors could not be broadcast together with shapes {shapes}"
        ) from None
    return with_originals(out, originals)


# ---------------------------------------------------------------------------- __getitem__
def getitem(self: Tensor, index: Any) -> Tensor:
    """Mirrors: ``torch.Tensor.__getitem__`` (see NOTE [Indexing like PyTorch])."""
    if index is None:
        return _shape.unsqueeze(self, 0)
    if index is Ellipsis:
        return _shape._view(P["alias"], self, {})
    if type(index) is int:
        return _select_int(self, 0, index)
    if isinstance(index, slice):
        if self._data.ndim == 0:
            raise IndexError("slice() cannot be applied to a 0-dim tensor.")
        return _apply_slice(self, 0, index, optimize=False)
    sliced, adv = apply_slicing(self, _as_tuple(index), optimize=True)
    if not adv:
        return _shape._view(P["alias"], self, {}) if sliced is self else sliced
    return bind(P["index"], (sliced,), {"indices": _indices(sliced, adv)})


# ---------------------------------------------------------------------------- __setitem__
_C_NAMES = {"float32": "float", "float64": "double", "float16": "c10::Half", "bool": "bool"}


def _value_tensor(self: Tensor, value: Any) -> Tensor:
    if isinstance(value, Tensor):
        return value
    if value is None:  # NumPy would store nan (float) or refuse with another type
        raise TypeError(f"can't assign a NoneType to a {self.type()}")
    xp = _backend.namespace_of(self._data)
    if isinstance(value, complex) and self._data.dtype.kind != "c":
        if value.imag:  # PyTorch's checked conversion of the Python number
            c_type = _C_NAMES.get(self.dtype.name, f"{self.dtype.name}_t")
            raise RuntimeError(f"value cannot be converted to type {c_type} without overflow")
        value = value.real
    check_scalar_fits(value, self._data.dtype)
    try:
        return Tensor._make(xp.asarray(value, dtype=self._data.dtype))
    except (TypeError, ValueError):
        raise TypeError(f"can't assign a {type(value).__name__} to a {self.type()}") from None


def copy_to(dst: Tensor, src: Tensor) -> None:
    """PyTorch's ``at::indexing::copy_to``: ``copy_``, ``fill_`` for 0-d, else view+expand."""
    if dst._data.shape == src._data.shape:
        _shape.copy_(dst, src)
        return
    if src._data.ndim == 0:
        _shape.fill_tensor_(dst, src)
        return
    shape = src._data.shape
    lead = 0
    while lead < len(shape) and shape[lead] == 1:
        lead += 1
    src = _shape.view(src, shape[lead:])
    if src._data.shape != dst._data.shape:
        src = _shape.expand(src, *dst._data.shape)
    _shape.copy_(dst, src)


def setitem(self: Tensor, index: Any, value: Any) -> None:
    """Mirrors: ``torch.Tensor.__setitem__`` (see NOTE [Indexing like PyTorch])."""
    value = _value_tensor(self, value)
    if index is False:
        return
    if index is Ellipsis:
        copy_to(self, value)
        return
    if index is None or index is True:
        copy_to(_shape.unsqueeze(self, 0), value)
        return
    if type(index) is int:
        copy_to(_select_int(self, 0, index), value)
        return
    if isinstance(index, slice):
        copy_to(_apply_slice(self, 0, index, optimize=True), value)
        return
    sliced, adv = apply_slicing(self, _as_tuple(index), optimize=True)
    if not adv:
        copy_to(sliced, value)
        return
    shape = value._data.shape
    lead = 0
    while lead < len(shape) and shape[lead] == 1:
        lead += 1
    if lead:
        value = _shape.view(value, shape[lead:])
    _index_put_(sliced, _indices(sliced, adv), value, False)


def _fills_by_mask(indices: tuple, values: Tensor, accumulate: bool) -> bool:
    """PyTorch's ``canDispatchToMaskedFill``: one boolean (or uint8) mask and a one-element
    value are a ``masked_fill_`` with ``value.item()``, so the value's dtype is not checked."""
    originals = getattr(indices, "originals", None)
    return (not accumulate and values._data.size == 1 and originals is not None
            and len(originals) == 1 and originals[0]._data.dtype.kind in "bu"
            and originals[0]._data.dtype.itemsize == 1)


def _check_put(self: Tensor, indices: tuple, values: Tensor, accumulate: bool = False) -> None:
    if _fills_by_mask(indices, values, accumulate):
        if _backend.has_data(values._data) and not hasattr(values, "_bt_level"):
            # a masked fill with the one value, read as a checked number
            check_scalar_fits(values._data.reshape(-1)[0].item(), self._data.dtype)
        return  # no dtype or shape check
    if values._data.dtype != self._data.dtype:
        raise RuntimeError(
            "Index put requires the source and destination dtypes match, got "
            f"{_word(self)} for the destination and {_word(values)} for the source."
        )
    probe = np.broadcast_to(np.zeros((), dtype=np.bool_), self._data.shape)
    target = probe[np_index(indices)].shape
    try:
        np.broadcast_to(np.empty(values._data.shape, dtype=np.bool_), target)
    except ValueError:
        raise RuntimeError(
            f"shape mismatch: value tensor of shape {list(values._data.shape)} cannot be "
            f"broadcast to indexing result of shape {list(target)}"
        ) from None


def _index_put_(self: Tensor, indices: tuple, values: Tensor, accumulate: bool) -> Tensor:
    if has_internal_overlap(self._data):  # PyTorch writes every alias, and warns first
        if self._requires_grad or values._requires_grad:
            # ... after autograd's in-place check (a view of a leaf raises without warning)
            _check_inplace(self)
        warnings.warn(
            "Use of index_put_ on expanded tensors is deprecated. Please clone() the tensor "
            "before performing this operation. This also applies to advanced indexing e.g. "
            "tensor[indices] = tensor", UserWarning, stacklevel=3)
    _check_put(self, indices, values, accumulate)
    if values._data.ndim == 0 and not _fills_by_mask(indices, values, accumulate) \
            and _overlaps_written(self._data, values._data):
        # ATen's assert_no_overlap(self, value): a one-element value is read as a number only
        # on the masked_fill_ path (a 0-d bool index became an int64 index: x[tensor(True)])
        raise RuntimeError(
            "unsupported operation: some elements of the input tensor and the written-to "
            "tensor refer to a single memory location. Please clone() the tensor before "
            "performing the operation.")
    return bind_inplace(
        P["index_put"], self, (self, values), {"indices": indices, "accumulate": bool(accumulate)}
    )


def _overlaps_written(dst: Any, src: Any) -> bool:
    """PyTorch's ``get_overlap_status`` is Partial or Full (the same array is Full); only
    NumPy arrays are compared (a batched or meta value has no memory to look at)."""
    if type(dst) is not np.ndarray or type(src) is not np.ndarray:
        return False
    return dst is src or (_may_share(dst, src) and (_partial_overlap(dst, src) or (
        dst.__array_interface__["data"][0] == src.__array_interface__["data"][0]
        and dst.nbytes == src.nbytes and dst.strides == src.strides)))


def _word(t: Tensor) -> str:
    return t.type().replace("torch.", "").replace("Tensor", "")


def iter_tensor(self: Tensor) -> Any:
    """Mirrors: ``torch.Tensor.__iter__`` (iterates ``unbind(0)``)."""
    if self._data.ndim == 0:
        raise TypeError("iteration over a 0-d tensor")
    return iter(_shape.unbind(self, 0))


# ---------------------------------------------------------------------------- index_put
def _put_indices(self: Tensor, indices: Any) -> tuple:
    if not isinstance(indices, (tuple, list)):
        raise TypeError("index_put(): argument 'indices' (position 1) must be tuple of Tensors, "
                        f"not {type(indices).__name__}")
    adv: dict = {}
    dim = 0
    for k, obj in enumerate(indices):
        if not isinstance(obj, Tensor):
            raise TypeError(
                f"expected Tensor as element {k} in argument 0, but got {type(obj).__name__}"
            )
        dim += _record_advanced(self, dim, obj, adv)
    if not adv:
        raise RuntimeError("index_put_ needs at least one index tensor")
    return _indices(self, adv)


def index_put(input: Tensor, indices: Any, values: Tensor, accumulate: bool = False) -> Tensor:
    """Mirrors: ``torch.index_put``."""
    idx = _put_indices(input, indices)
    _check_put(input, idx, values, accumulate)
    return bind(P["index_put"], (input, values), {"indices": idx, "accumulate": bool(accumulate)})


def index_put_(self: Tensor, indices: Any, values: Tensor, accumulate: bool = False) -> Tensor:
    """Mirrors: ``torch.Tensor.index_put_``."""
    if not isinstance(accumulate, bool):  # PyTorch's parser
        raise TypeError(f"index_put_(): argument 'accumulate' must be bool, not "
                        f"{type(accumulate).__name__}")
    return _index_put_(self, _put_indices(self, indices), values, accumulate)


def contains(self: Tensor, element: Any) -> bool:
    """``element in t``: whether any entry equals it. Mirrors: ``torch.Tensor.__contains__``
    (only tensors and numbers; anything else is PyTorch's RuntimeError, not a walk of the
    tensor's rows)."""
    if isinstance(element, (Tensor, numbers.Number)):
        return bool((element == self).any().item())
    raise RuntimeError("Tensor.__contains__ only supports Tensor or scalar, but you passed in a "
                       f"{type(element)}.")


METHODS = {
    "__getitem__": getitem,
    "__setitem__": setitem,
    "__iter__": iter_tensor,
    "__contains__": contains,
    "index_put": index_put,
    "index_put_": index_put_,
    **_GATHER_METHODS,
}
