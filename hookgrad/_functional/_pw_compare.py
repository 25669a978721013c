"""Public comparison, logical, bitwise and selection ops (``eq``..., ``where``, ``clamp``,
``maximum``, ``masked_fill``) and their operators. Mirrors the torch functions of the same names.
"""

from __future__ import annotations

import warnings
from typing import Any

from hookgrad._dtypes import check_scalar_fits
from hookgrad._ops._checks import tensor_arguments
from hookgrad._backend import has_data, namespace_of
from hookgrad._config import STATE
from hookgrad._dispatch import bind, bind_inplace, has_internal_overlap
from hookgrad._functional._common import Number, binary, result_type, wrap_scalar
from hookgrad._functional._pw_util import promote, require_tensor, scalar_cast, type_name
from hookgrad._ops._checks import check_number, check_operand, check_tensor
from hookgrad._ops._shapes import check_broadcast, check_broadcast_all
from hookgrad._ops.registry import PRIMITIVES as P
from hookgrad._tensor import Tensor

_EMPTY: dict = {}


# ---------------------------------------------------------------- comparisons
def _comparison(name: str, symbol: str) -> Any:
    prim = P[name]

    def fn(input: Any, other: Any) -> Tensor:
        return binary(prim, input, other)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = (f"Elementwise ``input {symbol} other`` as a bool tensor (computed in the "
                  f"promoted dtype).\n\nMirrors: ``torch.{name}``.")
    return fn


eq = _comparison("eq", "==")
ne = _comparison("ne", "!=")
lt = _comparison("lt", "<")
le = _comparison("le", "<=")
gt = _comparison("gt", ">")
ge = _comparison("ge", ">=")
not_equal, less, less_equal, greater, greater_equal = ne, lt, le, gt, ge


def _operator(fn: Any) -> Any:
    """A comparison dunder: other Python objects fall back to Python's default (``x == None``)."""
    def op(self: Tensor, other: Any) -> Any:
        if isinstance(other, (Tensor, *Number)) or hasattr(other, "dtype"):
            return fn(self, other)
        return NotImplemented

    return op


# ---------------------------------------------------------------- logical and is*
def _logical(name: str) -> Any:
    prim = P[name]

    def fn(input: Tensor, other: Tensor) -> Tensor:
        require_tensor(other, name, "other", 2)
        if input._data.shape != other._data.shape:
            check_broadcast(input._data.shape, other._data.shape)
        return bind(prim, (input, other))

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"Elementwise logical {name[8:]} (nonzero is true).\n\nMirrors: ``torch.{name}``."
    return fn


logical_and = tensor_arguments(_logical("logical_and"))
logical_or = tensor_arguments(_logical("logical_or"))
logical_xor = _logical("logical_xor")


def logical_not(input: Tensor) -> Tensor:
    """Mirrors: ``torch.logical_not``."""
    return bind(P["logical_not"], (input,))


def isnan(input: Tensor) -> Tensor:
    """Mirrors: ``torch.isnan``."""
    return bind(P["isnan"], (input,))


def isinf(input: Tensor) -> Tensor:
    """Mirrors: ``torch.isinf``."""
    return bind(P["isinf"], (input,))


def _tracked(*tensors: Tensor) -> bool:
    return STATE.grad_enabled and any(t.requires_grad for t in tensors)


def _record_abs(t: Tensor) -> Tensor:
    # PyTorch's composites call abs() on tensors that may require grad: its node saves `t`, so
    # saved-tensor hooks see that pack call (the node itself is dropped with the result)
    return bind(P["abs"], (t,))


@tensor_arguments
def isfinite(input: Tensor) -> Tensor:
    """Mirrors: ``torch.isfinite`` (PyTorch's ``(x == x) & (x.abs() != inf)`` for floats)."""
    if input._data.dtype.kind in "fcV" and _tracked(input):
        _record_abs(input)
    return bind(P["isfinite"], (input,))


def isclose(input: Tensor, other: Tensor, rtol: float = 1e-05, atol: float = 1e-08,
            equal_nan: bool = False) -> Tensor:
    """``|input - other| <= atol + rtol * |other|`` elementwise (infinities equal when equal).

    Mirrors: ``torch.isclose``.
    """
    if input._data.dtype != other._data.dtype:
        raise RuntimeError(f"{type_name(input)} did not match {type_name(other)}")
    check_broadcast(input._data.shape, other._data.shape)  # PyTorch's RuntimeError
    params = {"rtol": rtol, "atol": atol, "equal_nan": equal_nan}
    if input._data.dtype.kind in "fcV" and _tracked(input, other):
        # the pack calls of PyTorch's composite: |rtol * other|, |input - other| and the
        # isfinite() of the latter
        _record_abs(other * rtol)  # type: ignore[operator]
        isfinite(_record_abs(bind(P["sub"], (input, other))))
    return bind(P["isclose"], (input, other), params)


def allclose(input: Tensor, other: Tensor, rtol: float = 1e-05, atol: float = 1e-08,
             equal_nan: bool = False) -> bool:
    """Mirrors: ``torch.allclose``."""
    return bool(isclose(input, other, rtol, atol, equal_nan)._data.all())


def equal(input: Tensor, other: Tensor) -> bool:
    """Same shape and equal elements (nan is never equal).

    Mirrors: ``torch.equal``.
    """
    if input._data.shape != other._data.shape:
        return False
    if not (has_data(input._data) and has_data(other._data)):
        raise NotImplementedError("aten::equal: attempted to run this operator with Meta tensors, "
                                  "but there was no fake impl or Meta kernel registered.")
    return bool(eq(input, other)._data.all())


# ---------------------------------------------------------------- bitwise
def _bitwise(name: str) -> Any:
    prim = P[name]

    def fn(input: Any, other: Any) -> Tensor:
        (a, b), cast = promote(input, other)
        kind = (cast.np if cast is not None else a._data.dtype).kind
        if kind in "fV":
            bad = a if a._data.dtype.kind in "fV" else b
            raise NotImplementedError(f'"{name}_cpu" not implemented for \'{type_name(bad)}\'')
        return bind(prim, (a, b), _EMPTY, cast)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"Elementwise {name[8:]} of integer or bool tensors.\n\nMirrors: ``torch.{name}``."
    return fn


bitwise_and = _bitwise("bitwise_and")
bitwise_or = _bitwise("bitwise_or")
bitwise_xor = _bitwise("bitwise_xor")


def bitwise_not(input: Tensor) -> Tensor:
    """Mirrors: ``torch.bitwise_not`` (``~`` on bool is logical not)."""
    if input._data.dtype.kind in "fV":
        raise TypeError("~ (operator.invert) is only implemented on integer and Boolean-type "
                        "tensors")
    return bind(P["bitwise_not"], (input,))


def _bitwise_inplace(name: str) -> Any:
    prim = P[name]

    def fn(self: Tensor, other: Any) -> Tensor:
        (a, b), cast = promote(self, other)
        if (cast.np if cast is not None else a._data.dtype).kind in "fV":
            raise NotImplementedError(f'"{name}_cpu" not implemented for \'{type_name(self)}\'')
        return bind_inplace(prim, self, (a, b), _EMPTY, cast)

    fn.__name__ = fn.__qualname__ = name + "_"
    fn.__doc__ = f"Mirrors: ``torch.Tensor.{name}_``."
    return fn


# ---------------------------------------------------------------- where / masked_fill
def where(condition: Tensor, input: Any = None, other: Any = None) -> Any:
    """``input`` where `condition` holds, else ``other`` (either may be a Python scalar).

    With only `condition`, returns the indices of its nonzero elements as a tuple.

    Mirrors: ``torch.where`` (``WhereBackward0``, saving the condition).
    """
    if input is None and other is None:
        return _nonzero_tuple(condition)
    check_tensor(condition, "where", "condition", 1)
    for pos, value in ((2, input), (3, other)):
        if not isinstance(value, Tensor):
            check_operand(value, "where", ("input", "other")[pos - 2], pos)
    kind = condition._data.dtype
    if kind.kind != "b":
        if kind.name != "uint8":
            raise RuntimeError("where expected condition to be a boolean tensor, but got a "
                               f"tensor with dtype {type_name(condition)}")
        warnings.warn("where received a uint8 condition tensor. This behavior is deprecated and "
                      "will be removed in a future version of PyTorch. Use a boolean condition "
                      "instead.", UserWarning, stacklevel=2)
    shapes = [t._data.shape for t in (condition, input, other) if isinstance(t, Tensor)]
    if any(s != shapes[0] for s in shapes):
        check_broadcast_all(shapes)
    if (isinstance(input, Tensor) and isinstance(other, Tensor)
            and input._data.dtype == other._data.dtype):
        return bind(P["where"], (condition, input, other))
    like = input if isinstance(input, Tensor) else other
    if not isinstance(like, Tensor):
        like = condition
    rt = result_type(input, other)
    a = input if isinstance(input, Tensor) else wrap_scalar(input, rt, like)
    b = other if isinstance(other, Tensor) else wrap_scalar(other, rt, like)
    np_rt = rt.np
    if a._data.dtype == np_rt and b._data.dtype == np_rt:
        return bind(P["where"], (condition, a, b))
    # `bind` casts every input, the condition included; np.where reads nonzero as true.
    return bind(P["where"], (condition, a, b), _EMPTY, rt)


def _nonzero_tuple(condition: Tensor) -> tuple:
    xp = namespace_of(condition._data)
    return tuple(Tensor._make(idx.astype(xp.int64, copy=False))
                 for idx in xp.nonzero(condition._data))


def _tensor_where(self: Tensor, condition: Tensor, other: Any) -> Tensor:
    """Mirrors: ``torch.Tensor.where`` (``self`` where `condition`, else `other`)."""
    return where(condition, self, other)


def _masked_fill_args(self: Tensor, mask: Tensor, value: Any) -> tuple[Any, tuple, dict]:
    if mask._data.shape != self._data.shape:  # PyTorch names the mask "tensor a"
        check_broadcast(mask._data.shape, self._data.shape)
    if mask._data.dtype.kind != "b":
        raise RuntimeError("masked_fill_ only supports boolean masks, but got mask with dtype "
                           f"{_c_type(mask)}")
    if isinstance(value, Tensor):
        if value._data.ndim != 0:
            raise RuntimeError("masked_fill_ only supports a 0-dimensional value tensor, but got "
                               f"tensor with {value._data.ndim} dimension(s).")
        if has_data(value._data) and not hasattr(value, "_bt_level"):
            # ATen reads the value as a number, checked (a vmap-batched value stays a tensor)
            check_scalar_fits(value._data.item(), self._data.dtype)
        return P["masked_fill_tensor"], (self, mask, value), _EMPTY
    check_scalar_fits(value, self._data.dtype)
    return P["masked_fill"], (self, mask), {"value": value}


def _c_type(t: Tensor) -> str:
    return {"uint8": "unsigned char", "int8": "signed char", "int16": "short",
            "int32": "int", "int64": "long int", "float32": "float", "float64": "double",
            "float16": "c10::Half"}.get(t.dtype.name, t.dtype.name)


@tensor_arguments
def masked_fill(input: Tensor, mask: Tensor, value: Any) -> Tensor:
    """`input` with `value` where `mask` is true (``MaskedFillBackward0``/``1``).

    Mirrors: ``torch.masked_fill``.
    """
    prim, tensors, params = _masked_fill_args(input, mask, value)
    return bind(prim, tensors, params)


def masked_fill_(self: Tensor, mask: Tensor, value: Any) -> Tensor:
    """Mirrors: ``torch.Tensor.masked_fill_``."""
    prim, tensors, params = _masked_fill_args(self, mask, value)
    overlapping = has_internal_overlap(self._data)
    out = bind_inplace(prim, self, tensors, params)
    if overlapping:  # PyTorch writes every alias, warning once its autograd checks passed
        warnings.warn(
            "Use of masked_fill_ on expanded tensors is deprecated. Please clone() the tensor "
            "before performing this operation. This also applies to advanced indexing e.g. "
            "tensor[mask] = scalar", UserWarning, stacklevel=2)
    return out


# ---------------------------------------------------------------- clamp
def _clamp_args(input: Tensor, min: Any, max: Any) -> tuple[Any, tuple, dict, Any]:  # noqa: A002
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    tmin, tmax = isinstance(min, Tensor), isinstance(max, Tensor)
    for name, bound, is_t in (("min", min, tmin), ("max", max, tmax)):
        if bound is not None and not is_t:
            check_number(bound, "clamp", name, 2)
    if tmin or tmax:
        if (tmin or min is None) and (tmax or max is None):
            if tmin and tmax:
                tensors, cast = promote(input, min, max)
                return P["clamp_tensor"], tensors, _EMPTY, cast
            bound = min if tmin else max
            (x, b), cast = promote(input, bound)
            absent = _absent_bound(x)
            if tmin:
                return P["clamp_tensor_min"], (x, b, absent), _EMPTY, cast
            return P["clamp_tensor_max"], (x, absent, b), _EMPTY, cast
        # A number with a tensor: PyTorch takes the Scalar overload, which only 0-d tensors
        # convert to; any other tensor matches no overload (its argument parser's TypeError)
        for bound in (min, max):
            if isinstance(bound, Tensor) and bound._data.ndim != 0:
                got = ", ".join(f"{k}={'Tensor' if isinstance(v, Tensor) else type(v).__name__}"
                                for k, v in sorted((("min", min), ("max", max)))
                                if v is not None)
                raise TypeError(
                    f"clamp() received an invalid combination of arguments - got (Tensor, "
                    f"{got}), but expected one of:\n * (Tensor input, Tensor min = None, "
                    "Tensor max = None, *, Tensor out = None)\n * (Tensor input, Number min = "
                    "None, Number max = None, *, Tensor out = None)\n")
        min = min.item() if tmin else min  # noqa: A001
        max = max.item() if tmax else max  # noqa: A001
    cast = scalar_cast(input, *(v for v in (min, max) if v is not None))
    return P["clamp"], (input,), {"min": min, "max": max}, cast


def _absent_bound(like: Tensor) -> Tensor:
    """Placeholder for the missing bound of ``clamp(x, min=t)``: gives PyTorch's empty edge."""
    return Tensor._make(namespace_of(like._data).zeros((), dtype=like._data.dtype))


def clamp(input: Tensor, min: Any = None, max: Any = None) -> Tensor:  # noqa: A002
    """Clamp into ``[min, max]`` (``ClampBackward1`` for numbers, ``ClampBackward0`` tensors).

    Mirrors: ``torch.clamp``.
    """
    prim, tensors, params, cast = _clamp_args(input, min, max)
    return bind(prim, tensors, params, cast)


clip = clamp


def clamp_(self: Tensor, min: Any = None, max: Any = None) -> Tensor:  # noqa: A002
    """Mirrors: ``torch.Tensor.clamp_``."""
    prim, tensors, params, cast = _clamp_args(self, min, max)
    return bind_inplace(prim, self, tensors, params, cast)


def _one_sided(name: str, bound: str) -> tuple[Any, Any]:
    scalar_prim, tensor_prim = P[name], P[name + "_tensor"]

    def args(input: Tensor, value: Any) -> tuple[Any, tuple, dict, Any]:
        if isinstance(value, Tensor):
            tensors, cast = promote(input, value)
            return tensor_prim, tensors, _EMPTY, cast
        return scalar_prim, (input,), {bound: value}, scalar_cast(input, value)

    def fn(input: Tensor, value: Any) -> Tensor:
        prim, tensors, params, cast = args(input, value)
        return bind(prim, tensors, params, cast)

    def fn_(self: Tensor, value: Any) -> Tensor:
        prim, tensors, params, cast = args(self, value)
        return bind_inplace(prim, self, tensors, params, cast)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"Clamp on one side only.\n\nMirrors: ``torch.{name}``."
    fn_.__name__ = fn_.__qualname__ = name + "_"
    fn_.__doc__ = f"Mirrors: ``torch.Tensor.{name}_``."
    return fn, fn_


clamp_min, clamp_min_ = _one_sided("clamp_min", "min")
clamp_max, clamp_max_ = _one_sided("clamp_max", "max")


# ---------------------------------------------------------------- maximum / minimum
def _extremum(name: str, doc: str) -> Any:
    prim = P[name]

    def fn(input: Tensor, other: Tensor) -> Tensor:
        require_tensor(other, name, "other", 2)
        return binary(prim, input, other)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"{doc}\n\nMirrors: ``torch.{name}``."
    return fn


maximum = _extremum("maximum", "Elementwise maximum (nan wins; ties split the gradient).")
minimum = _extremum("minimum", "Elementwise minimum (nan wins; ties split the gradient).")
fmax = _extremum("fmax", "Elementwise maximum ignoring nan.")
fmin = _extremum("fmin", "Elementwise minimum ignoring nan.")

__all__ = [
    "eq", "ne", "lt", "le", "gt", "ge", "not_equal", "less", "less_equal", "greater",
    "greater_equal", "logical_and", "logical_or", "logical_xor", "logical_not", "isnan", "isinf",
    "isfinite", "isclose", "allclose", "equal", "bitwise_and", "bitwise_or", "bitwise_xor",
    "bitwise_not", "where", "masked_fill", "clamp", "clip", "clamp_", "clamp_min", "clamp_min_",
    "clamp_max", "clamp_max_", "maximum", "minimum", "fmax", "fmin",
]


def _reflected(fn: Any) -> Any:
    return lambda self, other: fn(other, self)


METHODS = {
    "eq": eq, "ne": ne, "lt": lt, "le": le, "gt": gt, "ge": ge, "not_equal": ne, "less": lt,
    "less_equal": le, "greater": gt, "greater_equal": ge,
    "__eq__": _operator(eq), "__ne__": _operator(ne), "__lt__": _operator(lt),
    "__le__": _operator(le), "__gt__": _operator(gt), "__ge__": _operator(ge),
    "logical_and": logical_and, "logical_or": logical_or, "logical_xor": logical_xor,
    "logical_not": logical_not, "isnan": isnan, "isinf": isinf, "isfinite": isfinite,
    "isclose": isclose, "allclose": allclose, "equal": equal,
    "bitwise_and": bitwise_and, "bitwise_or": bitwise_or, "bitwise_xor": bitwise_xor,
    "bitwise_not": bitwise_not, "bitwise_and_": _bitwise_inplace("bitwise_and"),
    "bitwise_or_": _bitwise_inplace("bitwise_or"),
    "bitwise_xor_": _bitwise_inplace("bitwise_xor"),
    "__and__": bitwise_and, "__or__": bitwise_or, "__xor__": bitwise_xor,
    "__rand__": _reflected(bitwise_and), "__ror__": _reflected(bitwise_or),
    "__rxor__": _reflected(bitwise_xor), "__invert__": bitwise_not,
    "__iand__": _bitwise_inplace("bitwise_and"), "__ior__": _bitwise_inplace("bitwise_or"),
    "__ixor__": _bitwise_inplace("bitwise_xor"),
    "where": _tensor_where, "masked_fill": masked_fill, "masked_fill_": masked_fill_,
    "clamp": clamp, "clip": clamp, "clamp_": clamp_, "clip_": clamp_,
    "clamp_min": clamp_min, "clamp_min_": clamp_min_, "clamp_max": clamp_max,
    "clamp_max_": clamp_max_, "maximum": maximum, "minimum": minimum, "fmax": fmax,
    "fmin": fmin,
}
