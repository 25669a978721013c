"""The ``meta`` backend object and its array namespace (NOTE [Meta backend]).

Layer 1. Importing this module registers the backend: ``device("meta")`` then has one, as on
every PyTorch build.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from hookgrad import _memory_format as _formats
from hookgrad._backend import Backend, register_backend
from hookgrad._meta import _layout, _standin, dispatch, rules
from hookgrad._meta.array import MetaArray
from hookgrad._namespace_proxy import WrappingNamespace


def _shape(shape: Any) -> tuple:
    if isinstance(shape, (int, np.integer)):
        return (int(shape),)
    return tuple(int(n) for n in shape)


def _host_to_meta(x: Any) -> Any:
    """The metadata of host results (NumPy arrays and scalars) as meta arrays."""
    if isinstance(x, (np.ndarray, np.generic)):
        x = np.asarray(x)
        return MetaArray(x.shape, x.dtype, _layout.dense_like(x.shape, x.strides, x.itemsize))
    if type(x) in (tuple, list):
        return type(x)(_host_to_meta(i) for i in x)
    return x


def _has_meta(x: Any) -> bool:
    if type(x) is MetaArray:
        return True
    return type(x) in (tuple, list) and any(_has_meta(i) for i in x)


class _Namespace(WrappingNamespace):
    """NumPy's namespace making meta arrays (``xp`` of the meta backend).

    Factories taking a shape are computed from the shape; any other function runs on what it is
    given (meta arrays dispatch to `MetaArray`) and host results become meta arrays.
    """

    ndarray = MetaArray

    def _wrap(self, name: str, value: Any) -> Any:
        def run(*args: Any, **kwargs: Any) -> Any:
            if _has_meta(args) or _has_meta(tuple(kwargs.values())):
                # straight to the meta dispatch: some functions (``ascontiguousarray``) do not
                # dispatch on their arguments
                return dispatch.function(value, args, kwargs)
            return _host_to_meta(value(*args, **kwargs))
        run.__name__ = name
        return run

    # -- factories from a shape: no host array of that shape is ever made
    @staticmethod
    def empty(shape: Any, dtype: Any = float, order: str = "C", **_: Any) -> MetaArray:
        shape = _shape(shape)
        if order == "F":
            strides = tuple(reversed(_layout.contiguous(shape[::-1], np.dtype(dtype).itemsize)))
            return MetaArray(shape, dtype, strides)
        return MetaArray(shape, dtype)

    zeros = empty
    ones = empty

    @staticmethod
    def full(shape: Any, fill_value: Any, dtype: Any = None, order: str = "C",
             **_: Any) -> MetaArray:
        if dtype is None:
            dtype = (fill_value.dtype if isinstance(fill_value, MetaArray)
                     else np.full((), fill_value).dtype)
        return MetaArray(_shape(shape), dtype)

    @staticmethod
    def eye(n: int, m: int | None = None, k: int = 0, dtype: Any = float, **_: Any) -> MetaArray:
        return MetaArray((n, n if m is None else m), dtype)

    @staticmethod
    def identity(n: int, dtype: Any = float, **_: Any) -> MetaArray:
        return MetaArray((n, n), dtype)

    @staticmethod
    def arange(start: Any, stop: Any = None, step: Any = 1, dtype: Any = None,
               **_: Any) -> MetaArray:
        if stop is None:
            start, stop = 0, start
        if step == 0:
            raise ZeroDivisionError("division by zero")
        n = max(0, math.ceil((stop - start) / step))
        return MetaArray((n,), dtype if dtype is not None else np.array([start, stop, step]).dtype)

    @staticmethod
    def linspace(start: Any, stop: Any, num: int = 50, endpoint: bool = True,
                 retstep: bool = False, dtype: Any = None, axis: int = 0) -> Any:
        probe = np.linspace(np.asarray(start).flat[0], np.asarray(stop).flat[0], 2, dtype=dtype)
        out = MetaArray((int(num),), probe.dtype)
        return (out, MetaArray((), probe.dtype)) if retstep else out

    @staticmethod
    def asarray(x: Any, dtype: Any = None, order: Any = None, copy: Any = None,
                **_: Any) -> Any:
        if isinstance(x, MetaArray):
            return rules.function(np.asarray, (x,), {"dtype": dtype, "copy": copy,
                                                     "order": order})
        return _host_to_meta(np.asarray(x, dtype=dtype))

    @staticmethod
    def array(x: Any, dtype: Any = None, copy: bool = True, order: str = "K",
              **_: Any) -> Any:
        if isinstance(x, MetaArray):
            return rules.function(np.asarray, (x,), {"dtype": dtype, "copy": copy,
                                                     "order": order})
        return _host_to_meta(np.asarray(x, dtype=dtype))


class MetaBackend(Backend):
    """The ``meta`` backend: arrays with metadata and no data (NOTE [Meta backend]).

    Mirrors: PyTorch's ``meta`` device.
    """

    device_type = "meta"
    has_data = False
    xp = _Namespace(np, "meta_numpy")
    array_type = MetaArray

    def owns(self, arr: Any) -> bool:
        return type(arr) is MetaArray

    def memory_owner(self, arr: Any) -> Any:
        return arr if arr._base is None else arr._base

    def element_offset(self, arr: Any, owner: Any) -> int:
        return (arr._offset - owner._offset) // arr.itemsize

    def as_strided(self, flat: Any, size: tuple, byte_strides: tuple) -> Any:
        root = flat if flat._base is None else flat._base
        return MetaArray(size, flat.dtype, byte_strides, flat._offset, root)

    def to_host(self, arr: Any) -> np.ndarray:
        raise NotImplementedError(dispatch.NO_DATA)

    def from_host(self, host: np.ndarray, index: int | None = None) -> Any:
        # PyTorch keeps a dense tensor's strides when it moves (``empty_like`` semantics)
        return _host_to_meta(host)

    def call_on_stand_ins(self, fn: Any, arrays: tuple, params: dict) -> Any:
        """A NumPy-only kernel's result layout, from a run on stand-ins (small inputs only:
        NotImplementedError otherwise, PyTorch's type for an op without a meta kernel)."""
        return _standin.call(fn, arrays, params)

    def quiet(self, fn: Any) -> Any:
        return fn  # no data, no floating-point errors

    def empty_for(self, arr: Any, name: str, dtype: Any) -> MetaArray:
        """A new array of `arr`'s shape laid out as format `name` asks (``preserve_format``:
        a dense array's strides are kept, else its suggested format), as ``empty_like`` does."""
        item = np.dtype(dtype).itemsize
        if name == "preserve_format":
            if not arr.flags.c_contiguous and _formats._dense(arr):
                return MetaArray(arr.shape, dtype, tuple(st // arr.itemsize * item
                                                         for st in arr.strides))
            name = "contiguous_format"
            for fmt in ("channels_last", "channels_last_3d"):
                order = _formats._ORDERS.get((fmt, arr.ndim))
                if order is not None and not arr.flags.c_contiguous and \
                        _formats._strides_like(arr, order):
                    name = fmt
        order = _formats.slow_to_fast(name, arr.ndim)
        return MetaArray(arr.shape, dtype, _formats.dense_strides(arr.shape, order, item))


META = MetaBackend()
register_backend(META)
