"""Helpers shared by the public op wrappers: scalar wrapping and PyTorch type promotion."""

from __future__ import annotations

from typing import Any

import numpy as np

from hookgrad._backend import namespace_of
from hookgrad._config import GLOBAL
from hookgrad._dispatch import bind
from hookgrad._dtypes import (
    bfloat16,
    default_complex_dtype,
    float32,
    dtype,
    from_numpy_dtype,
    result_type_of,
    scalar_dtype,
)
from hookgrad._ops._checks import check_operand, not_tensor
from hookgrad._ops._shapes import check_broadcast
from hookgrad._ops.registry import Primitive
from hookgrad._tensor import Tensor

Number = (int, float, bool, complex)
# Shared default for absent params. Never mutated: nodes keep it as their ``_params``.
_EMPTY: dict = {}


def is_scalar(x: Any) -> bool:
    return isinstance(x, Number) or (hasattr(x, "dtype") and not isinstance(x, Tensor)
                                     and getattr(x, "ndim", 1) == 0)


def result_type(*args: Any) -> dtype:
    """The dtype PyTorch's promotion gives for tensors and Python scalars.

    Mirrors: ``torch.result_type``.
    """
    dims, zeros, wrapped = [], [], []
    for a in args:
        if isinstance(a, Tensor):
            d = from_numpy_dtype(a._data.dtype)
            if a._wrapped_number:
                wrapped.append(d)
            elif a._data.ndim == 0:
                zeros.append(d)
            else:
                dims.append(d)
        elif a is not None:
            wrapped.append(scalar_dtype(a if isinstance(a, Number) else a.item()))
    return result_type_of(dims, zeros, wrapped)


def wrap_scalar(value: Any, d: dtype, like: Tensor) -> Tensor:
    """A Python scalar as a 0-d "wrapped number" tensor (never passed to pack hooks)."""
    xp = namespace_of(like._data)
    t = Tensor._make(xp.asarray(value, dtype=d.np))
    t._wrapped_number = True
    return t


def to_tensor_like(x: Any, like: Tensor) -> Tensor:
    if isinstance(x, Tensor):
        return x
    return wrap_scalar(x, from_numpy_dtype(namespace_of(like._data).asarray(x).dtype)
                       if not isinstance(x, Number) else _default_for(x), like)


def _default_for(x: Any) -> dtype:
    d = scalar_dtype(x)
    if d.category < 2:
        return d
    return GLOBAL.default_dtype if d.category == 2 else default_complex_dtype()


def binary(prim: Primitive, a: Any, b: Any, params: dict | None = None,
           float_result: bool = False) -> Tensor:
    """Call a two-tensor primitive with PyTorch promotion; scalars become wrapped numbers."""
    p = params if params is not None else _EMPTY
    if isinstance(a, Tensor):
        da = a._data
        if isinstance(b, Tensor):
            if da.shape != b._data.shape:
                check_broadcast(da.shape, b._data.shape)
            if da.dtype == b._data.dtype and (not float_result or da.dtype.kind in "fV"):
                return bind(prim, (a, b), p)
        elif (type(b) is float or type(b) is int) and da.dtype.kind == "f" and (
                not a._wrapped_number):
            # Fast path of `result_type` for ``float_tensor op python_number``: a dimensioned
            # or 0-dim floating tensor outranks a wrapped Python int or float, so the result
            # (and the wrapped number) take the tensor's dtype.
            return bind(prim, (a, _wrap_like(b, da)), p)
    return _promoted(prim, a, b, p, float_result)


def _wrap_like(value: int | float, data: Any) -> Tensor:
    """`wrap_scalar` for a value known to take `data`'s dtype on `data`'s backend."""
    xp = np if type(data) is np.ndarray else namespace_of(data)
    t = Tensor._make(xp.asarray(value, dtype=data.dtype))
    t._wrapped_number = True
    return t


def _promoted(prim: Primitive, a: Any, b: Any, p: dict, float_result: bool) -> Tensor:
    if not isinstance(a, Tensor):
        check_operand(a, prim.name, "input", 1)
    if not isinstance(b, Tensor):
        check_operand(b, prim.name, "other", 2)
    if not isinstance(a, Tensor):
        if not isinstance(b, Tensor):
            raise TypeError(f"{prim.name}(): expected at least one Tensor argument")
        like = b
    else:
        like = a
    rt = result_type(a, b)
    if float_result and not (rt.is_floating_point or rt.is_complex):
        rt = GLOBAL.default_dtype
    # a Python number meets a bfloat16 tensor at float32 precision, unrounded (NOTE [bfloat16])
    st = float32 if rt is bfloat16 else rt
    ta = a if isinstance(a, Tensor) else wrap_scalar(a, st, like)
    tb = b if isinstance(b, Tensor) else wrap_scalar(b, st, like)
    cast = rt if (ta._data.dtype != rt.np or tb._data.dtype != rt.np) else None
    return bind(prim, (ta, tb), p, cast)


def unary_float(prim: Primitive, x: Tensor, params: dict | None = None) -> Tensor:
    """Unary op that computes in floating point (ints promote to the default dtype)."""
    p = params if params is not None else _EMPTY
    try:
        kind = x._data.dtype.kind
    except AttributeError:
        raise not_tensor(prim.name, x) from None
    if kind in "fcV":
        return bind(prim, (x,), p)
    return bind(prim, (x,), p, GLOBAL.default_dtype)
