"""Strides and flags arithmetic for meta arrays, and the one way to make a new one.

Layer 1 (NOTE [Meta backend] in hookgrad/_meta/__init__.py). `make` builds a `MetaArray`
through `MAKER`, which `hookgrad._meta.array` fills when it is imported: the rule modules
build results without importing the class whose methods call them (no import circle).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

# elements: an input up to this span gets a real zero-filled stand-in (NOTE [Meta backend])
SMALL = 1 << 16

MAKER: list[Callable[..., Any]] = []


def make(shape: Any, dtype: Any, strides: Any = None, offset: int = 0, base: Any = None) -> Any:
    """A new meta array (C-contiguous unless `strides` are given)."""
    return MAKER[0](shape, dtype, strides, offset, base)


def contiguous(shape: tuple, itemsize: int) -> tuple:
    """C-contiguous byte strides of `shape`."""
    out, acc = [], itemsize
    for n in reversed(shape):
        out.append(acc)
        acc *= max(n, 1)
    return tuple(reversed(out))


def dense_like(shape: tuple, strides: tuple, itemsize: int) -> tuple:
    """Dense byte strides keeping the order of `strides` (NumPy's ``order='K'`` copy)."""
    if len(strides) != len(shape):
        return contiguous(shape, itemsize)
    order = sorted(range(len(shape)), key=lambda d: -abs(strides[d]))
    out, acc = [0] * len(shape), itemsize
    for d in reversed(order):
        out[d] = acc
        acc *= max(shape[d], 1)
    return tuple(out)


def is_contiguous(shape: tuple, strides: tuple, itemsize: int, fortran: bool = False) -> bool:
    """NumPy's C (or Fortran) contiguity flag: size-1 dimensions' strides do not matter."""
    if 0 in shape:
        return True
    dims = range(len(shape)) if fortran else reversed(range(len(shape)))
    acc = itemsize
    for d in dims:
        if shape[d] != 1:
            if strides[d] != acc:
                return False
            acc *= shape[d]
    return True


def span(shape: tuple, strides: tuple, itemsize: int) -> tuple[int, int]:
    """(lowest, one past highest) byte offsets reached from the first element."""
    if 0 in shape:
        return 0, 0
    lo = sum(s * (n - 1) for n, s in zip(shape, strides) if s < 0)
    hi = sum(s * (n - 1) for n, s in zip(shape, strides) if s > 0)
    return lo, hi + itemsize


def numel(shape: tuple) -> int:
    return math.prod(shape)


def broadcast(*shapes: tuple) -> tuple:
    """NumPy's broadcast of `shapes` (its ValueError when they do not broadcast)."""
    return tuple(np.broadcast_shapes(*shapes))


class Flags:
    """The part of ``ndarray.flags`` hookgrad reads. Mirrors: ``numpy.ndarray.flags``."""

    __slots__ = ("c_contiguous", "f_contiguous", "writeable", "owndata")

    def __init__(self, arr: Any) -> None:
        self.c_contiguous = is_contiguous(arr.shape, arr.strides, arr.itemsize)
        self.f_contiguous = is_contiguous(arr.shape, arr.strides, arr.itemsize, fortran=True)
        self.writeable = arr._writeable
        self.owndata = arr._base is None

    @property
    def contiguous(self) -> bool:
        return self.c_contiguous

    @property
    def aligned(self) -> bool:
        return True

    def __getitem__(self, key: str) -> bool:
        names = {"C_CONTIGUOUS": "c_contiguous", "C": "c_contiguous", "CONTIGUOUS": "c_contiguous",
                 "F_CONTIGUOUS": "f_contiguous", "F": "f_contiguous", "WRITEABLE": "writeable",
                 "W": "writeable", "OWNDATA": "owndata", "ALIGNED": "aligned"}
        return getattr(self, names[key.upper()])
