"""PyTorch's gradient layout contract: the memory layout a stored gradient takes.

NOTE [Gradient layout contract]
A leaf's ``.grad`` (and a retained ``.grad``) is laid out like the tensor itself when that
tensor is dense and non-overlapping (same strides, so ``p.grad`` of a transposed parameter is
transposed too), and row-major otherwise. An incoming gradient that already obeys keeps its
memory (NOTE [Stealing a gradient]); one that does not is copied into that layout, as
PyTorch's ``clone_obey_contract`` does. Only dims of size > 1 are compared.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from hookgrad import _backend


def _dense_order(arr: Any) -> bool:
    """Whether `arr` is non-overlapping and dense (some permutation of a contiguous array)."""
    if arr.size == 0:
        return True
    expected = arr.itemsize
    for st, n in sorted((st, n) for st, n in zip(arr.strides, arr.shape) if n != 1):
        if st != expected:
            return False
        expected *= n
    return True


def obeys(var: Any, grad: Any) -> bool:
    """Whether array `grad` already has the layout the contract asks for `var`."""
    if var.flags.c_contiguous and grad.flags.c_contiguous and var.shape == grad.shape:
        return True  # (row-major strides of one shape agree wherever a dim is not 1)
    if _dense_order(var):
        item_v, item_g = var.itemsize, grad.itemsize
        return all(n == 1 or sv // item_v == sg // item_g
                   for n, sv, sg in zip(grad.shape, var.strides, grad.strides))
    return bool(grad.flags.c_contiguous)


def copy_obeying(var: Any, grad: Any) -> Any:
    """A fresh array holding `grad`, laid out as the contract asks for `var`."""
    if type(grad) is np.ndarray and _dense_order(var) and min(var.strides, default=0) >= 0:
        item = grad.itemsize
        buf = np.empty(max(grad.size, 1), dtype=grad.dtype)
        strides = tuple(st // var.itemsize * item for st in var.strides)
        out = np.lib.stride_tricks.as_strided(buf, grad.shape, strides)
        out[...] = grad
        return out
    return ascontiguous_copy(grad)


def ascontiguous_copy(arr: Any) -> Any:
    """A fresh row-major copy of `arr`."""
    return _backend.namespace_of(arr).array(arr, order="C", copy=True)  # keeps 0-d arrays 0-d


__all__ = ["obeys", "copy_obeying", "ascontiguous_copy"]
