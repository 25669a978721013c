"""Helpers shared by the elementwise rule modules (pointwise, pointwise_math, activation,
comparison).

Layer 3 (imports Tensor and the backend seam only).

NOTE [Quiet impls]
PyTorch never warns when an op produces inf or nan (``log(0)``, ``x / 0``, ``exp(1000)``);
NumPy emits a RuntimeWarning, which the test suite turns into an error and users would see as
noise. Impls that can produce non-finite values from ordinary inputs are wrapped in `quiet`,
which switches NumPy's floating-point error handling to "ignore" for the duration of the call.
`np.errstate` costs about a microsecond per call (it rebuilds its state object every time), as
much as the whole `bind`; the NumPy backend's ``quiet`` sets NumPy's context variable to a
state built once, which costs a fifth of that (it falls back to `np.errstate` if NumPy's
private names move).

NOTE [Fast select]
NumPy's ``where`` (and ``putmask``, ``copyto(where=)``, boolean indexing) branch per element:
with a random mask they cost about 10 ns an element, fifty times an elementwise multiply. So
elementwise selections are written as arithmetic, ``a * mask + b * ~mask``, which gives exactly
the selected values when both sides are finite (adding an exact 0 changes nothing); when a side
holds inf or nan (``inf * 0`` is nan) `fast_where` falls back to ``np.where``. Checking
finiteness costs two fast passes, still far below one ``np.where``.

NOTE [Selecting by bits]
A float array's zero is the all-zero bit pattern, so ``np.where(mask, values, 0)`` is the AND of
the values' bits with a mask that has every bit set where `mask` holds: two branch-free passes
(the mask widened to the values' integer type, the AND into it), exact for inf, nan and -0.0
alike, with no finiteness test. For relu's backward on the MNIST example's activations it takes
0.4 ms where the multiplication (with its finiteness test and the sign fix of ``x * 0``) took
0.6, and a tenth of that on small arrays, where each of the multiplication's six NumPy calls
cost more than its arithmetic.

NOTE [Constant masks]
Rules of non-smooth ops (relu, clamp, maximum...) select gradients with a boolean mask computed
from saved values. A mask is a constant for autograd (its derivative is zero everywhere it is
defined), so it is computed on the raw arrays and wrapped with `Tensor._make` rather than through
comparison primitives: the rule stays differentiable in ``grad`` and in the saved values through
the ops that use the mask (``where``, ``mul``), which is what double backward needs.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from hookgrad import _backend
from hookgrad._backend import NUMPY, namespace_of
from hookgrad._ops._shapes import sum_to_dims
from hookgrad._tensor import Tensor

_make = Tensor._make

def quiet(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Run `fn` with floating-point warnings off (see NOTE [Quiet impls]).

    The error state belongs to the backend (NOTE [Backends]): NumPy's, which also governs
    NumPy ufuncs dispatched on other backends' arrays.
    """
    return NUMPY.quiet(fn)


def _finite(x: Any) -> bool:
    # a meta array has no values: any branch gives its result's shape and dtype
    return not _backend.has_data(x) or bool(np.isfinite(x).all())


def fast_where(condition: Any, a: Any, b: Any) -> Any:
    """``np.where(condition, a, b)`` computed as ``a * c + b * (1 - c)`` when that is exact.

    See NOTE [Fast select]. Falls back to `np.where` when a float value is inf or nan
    (``inf * 0`` is nan) and for bool results.
    """
    # dtypes of arrays, Python numbers as themselves (NumPy's weak scalars, as in np.where)
    rt = np.result_type(*(getattr(v, "dtype", v) for v in (a, b)))
    if rt.kind not in "fiu" or (rt.kind == "f" and not (_finite(a) and _finite(b))):
        return np.where(condition, a, b)
    xp = namespace_of(condition)
    kind = getattr(condition, "dtype", np.dtype(bool)).kind
    c = xp.asarray(condition if kind == "b" else np.not_equal(condition, 0)).astype(rt)
    if c.shape != np.broadcast_shapes(c.shape, np.shape(a), np.shape(b)):
        return a * c + b * (1 - c)
    out = xp.asarray(np.multiply(a, c))  # few large temporaries: allocation dominates
    np.subtract(1, c, out=c)
    np.multiply(c, b, out=c)
    return np.add(out, c, out=out)


# the integer type of each float type's bits (NOTE [Selecting by bits])
_BITS = {np.dtype(np.float16): np.int16, np.dtype(np.float32): np.int32,
         np.dtype(np.float64): np.int64}


def select_zero(values: Any, mask: Any) -> Any:
    """``np.where(mask, values, 0)``: by bits for a NumPy float array and a mask of its shape
    (NOTE [Selecting by bits]), else as a multiplication when `values` are finite."""
    bits = _BITS.get(values.dtype) if type(values) is np.ndarray else None
    if (bits is not None and values.ndim and type(mask) is np.ndarray
            and mask.shape == values.shape):
        keep = np.negative(mask, dtype=bits)  # all bits set where mask, none elsewhere
        return np.bitwise_and(values.view(bits), keep, out=keep).view(values.dtype)
    if values.dtype.kind != "f" or not _finite(values):
        return np.where(mask, values, values.dtype.type(0))
    out = namespace_of(values).asarray(np.multiply(values, mask))
    return np.add(out, 0, out=out)  # -0.0 -> +0.0, as np.where's 0 would give


def const(arr: Any) -> Tensor:
    """Wrap a raw array as a constant tensor (no history; see NOTE [Fast select] and
    NOTE [Constant masks])."""
    return _make(arr)


def zeros(t: Tensor) -> Tensor:
    """A constant zero tensor like `t` (PyTorch's ``zeros_like(grad)``: no graph attached)."""
    return _make(namespace_of(t._data).zeros_like(t._data))


def unbroadcast(g: Any, shape: tuple | None) -> Any:
    """Sum `g` down to `shape` (no-op when the shapes agree, or for None: a JVP keeps the
    broadcast shape)."""
    return g if shape is None or g._data.shape == shape else g.sum_to_size(shape)


def row_major(a: Any) -> Any:
    """`a`, copied row-major if it is a NumPy array that is not (other backends keep theirs)."""
    if type(a) is np.ndarray and not a.flags.c_contiguous:
        return np.ascontiguousarray(a)
    return a


def unbroadcast_arr(a: Any, shape: tuple) -> Any:
    """`unbroadcast` on a raw array (the computation of the ``sum_to_size`` primitive).

    Also turns the NumPy scalar an elementwise ufunc returns for 0-d operands into an array.
    """
    if a.shape == shape:
        return np.asarray(a) if isinstance(a, np.generic) else a
    dims, lead = sum_to_dims(a.shape, shape)
    # a reduction allocates its result row-major in PyTorch (NumPy may keep the input's order)
    out = row_major(a.sum(axis=dims, keepdims=True)) if dims else a
    return out.reshape(shape) if lead or out.shape != tuple(shape) else out


def _mask(mask: Any) -> Any:
    """The mask as a tensor; under vmap a mask of batched values is the logical array of the
    batched tensor the comparison made (NOTE [Masks of batched values], hookgrad/_functorch)."""
    owner = getattr(mask, "_owner", None)
    t = owner() if owner is not None else None
    return t if t is not None else _make(mask)


def keep(grad: Any, mask: Any, other: Any = 0.0) -> Any:
    """``where(mask, grad, other)`` with a raw boolean `mask` (see NOTE [Fast select] and
    NOTE [Constant masks])."""
    return grad.where(_mask(mask), other)


def drop(grad: Any, mask: Any, other: Any = 0.0) -> Any:
    """``where(mask, other, grad)``: zero (or `other`) the gradient where `mask` holds."""
    return grad.where(_mask(~mask), other)


__all__ = ["quiet", "const", "zeros", "unbroadcast", "unbroadcast_arr", "keep", "drop"]
