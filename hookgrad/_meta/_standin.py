"""Stand-ins: how a call on meta arrays gets its result's metadata (NOTE [Meta backend]).

Layer 1. `call` swaps every meta array in the arguments for a NumPy stand-in laid out like it,
runs the call, and turns what comes back into meta arrays: a result viewing a stand-in becomes
a view of that meta array at the same offset, anything else a new meta array with the result's
shape, dtype and strides. Stand-ins of small inputs are real zero-filled memory; those of large
ones are one element wide and serve only calls that never read (views).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from hookgrad._meta import _layout


def _metas(x: Any, found: dict) -> None:
    cls = _layout.MAKER[0]
    if type(x) is cls:
        found[id(x)] = x
    elif type(x) in (tuple, list):
        for i in x:
            _metas(i, found)
    elif type(x) is dict:
        for i in x.values():
            _metas(i, found)


def _stand_in(m: Any, real: bool) -> np.ndarray:
    item = m.dtype.itemsize
    if real:
        lo, hi = _layout.span(m.shape, m.strides, item)
        buf = np.zeros(max(hi - lo, item) // item + 1, m.dtype)
        start = -lo // item
    else:
        buf, start = np.zeros(1, m.dtype), 0
    return np.lib.stride_tricks.as_strided(buf[start:], m.shape, m.strides,
                                           writeable=m._writeable)  # views only: never written


def _swap(x: Any, table: dict) -> Any:
    if id(x) in table and type(x) is _layout.MAKER[0]:
        return table[id(x)][0]
    if type(x) in (tuple, list):
        return type(x)(_swap(i, table) for i in x)
    if type(x) is dict:
        return {k: _swap(v, table) for k, v in x.items()}
    return x


def _ptr(a: np.ndarray) -> int:
    return a.__array_interface__["data"][0]


def _back(x: Any, owners: dict) -> Any:
    """Meta arrays for NumPy results (views of a stand-in stay views of its meta array)."""
    if isinstance(x, np.ndarray):
        hit, b = None, x.base
        while hit is None and b is not None:
            hit, b = owners.get(id(b)), getattr(b, "base", None)
        if hit is not None:
            stand, m = hit
            root = m if m._base is None else m._base
            offset = m._offset + _ptr(x) - _ptr(stand)
            return _layout.make(x.shape, x.dtype, x.strides, offset, root)._set_writeable(
                m._writeable and x.flags.writeable)
        return _layout.make(x.shape, x.dtype, x.strides)
    if isinstance(x, np.generic):
        return _layout.make((), x.dtype)
    if type(x) in (tuple, list):
        return type(x)(_back(i, owners) for i in x)
    if hasattr(x, "_fields") and isinstance(x, tuple):  # NumPy's named results (slogdet, ...)
        return type(x)(*(_back(i, owners) for i in x))
    return x


def call(fn: Callable[..., Any], args: tuple, kwargs: dict, views: bool = False) -> Any:
    """`fn(*args, **kwargs)` with the meta arrays in them swapped for stand-ins (module doc)."""
    found: dict = {}
    _metas(args, found)
    _metas(kwargs, found)
    large = any(m.size > _layout.SMALL or _span(m) > _layout.SMALL for m in found.values())
    if large and not views:
        name = getattr(fn, "__qualname__", getattr(fn, "__name__", repr(fn)))
        raise NotImplementedError(
            f"meta tensors: no shape rule for '{name}' on inputs of more than {_layout.SMALL} "
            "elements")
    table = {k: (_stand_in(m, not large), m) for k, m in found.items()}
    # NumPy's views of a stand-in point at it (their ``base``), or at what it points at
    owners = {id(s): (s, m) for s, m in table.values()}
    owners.update({id(s.base): (s, m) for s, m in table.values()})
    with np.errstate(all="ignore"):
        result = fn(*_swap(args, table), **_swap(kwargs, table))
    return _back(result, owners)


def _span(m: Any) -> int:
    lo, hi = _layout.span(m.shape, m.strides, m.dtype.itemsize)
    return (hi - lo) // m.dtype.itemsize


def is_large(*arrays: Any) -> bool:
    cls = _layout.MAKER[0]
    return any(type(a) is cls and (a.size > _layout.SMALL or _span(a) > _layout.SMALL)
               for a in arrays)
