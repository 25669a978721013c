"""Public elementwise math ops: logs, roots, trigonometry, erf, rounding, sign, ``lerp``,
``addcmul``/``addcdiv``, ``fill``/``zero_``. Mirrors the torch functions of the same names.
"""

from __future__ import annotations

from typing import Any

from hookgrad._dtypes import check_scalar_fits
from hookgrad._ops._checks import tensor_arguments
from hookgrad._dispatch import bind, bind_inplace, has_internal_overlap
from hookgrad._functional._common import binary
from hookgrad._functional._pw_util import (
    float_cast,
    float_unary,
    inplace_unary,
    promote,
    reject_bool,
    require_float,
    same_unary,
    type_name,
)
from hookgrad._ops._checks import check_number
from hookgrad._ops._shapes import check_broadcast_all
from hookgrad._ops.registry import PRIMITIVES as P
from hookgrad._tensor import Tensor

# ---------------------------------------------------------------- computed in floating point
exp2 = float_unary("exp2", "Base-2 exponential.")
expm1 = float_unary("expm1", "``exp(x) - 1``, accurate near zero.")
log = float_unary("log", "Natural logarithm.")
log2 = float_unary("log2", "Base-2 logarithm.")
log10 = float_unary("log10", "Base-10 logarithm.")
log1p = float_unary("log1p", "``log(1 + x)``, accurate near zero.")
sqrt = float_unary("sqrt", "Square root.")
rsqrt = float_unary("rsqrt", "Reciprocal square root.")
reciprocal = float_unary("reciprocal", "``1 / x``.")
sin = float_unary("sin", "Sine.")
cos = float_unary("cos", "Cosine.")
tan = float_unary("tan", "Tangent.")
asin = float_unary("asin", "Inverse sine.")
acos = float_unary("acos", "Inverse cosine.")
atan = float_unary("atan", "Inverse tangent.")
sinh = float_unary("sinh", "Hyperbolic sine.")
cosh = float_unary("cosh", "Hyperbolic cosine.")
tanh = float_unary("tanh", "Hyperbolic tangent.")
asinh = float_unary("asinh", "Inverse hyperbolic sine.")
acosh = float_unary("acosh", "Inverse hyperbolic cosine.")
atanh = float_unary("atanh", "Inverse hyperbolic tangent.")
erf = float_unary("erf", "The error function.")
erfc = float_unary("erfc", "The complementary error function, ``1 - erf(x)``.")
arcsin = float_unary("arcsin", "Inverse sine.", prim="asin")
arccos = float_unary("arccos", "Inverse cosine.", prim="acos")
arctan = float_unary("arctan", "Inverse tangent.", prim="atan")
arcsinh = float_unary("arcsinh", "Inverse hyperbolic sine.", prim="asinh")
arccosh = float_unary("arccosh", "Inverse hyperbolic cosine.", prim="acosh")
arctanh = float_unary("arctanh", "Inverse hyperbolic tangent.", prim="atanh")

_FLOAT_UNARY = {
    "exp2": exp2, "expm1": expm1, "log": log, "log2": log2, "log10": log10, "log1p": log1p,
    "sqrt": sqrt, "rsqrt": rsqrt, "reciprocal": reciprocal, "sin": sin, "cos": cos, "tan": tan,
    "asin": asin, "acos": acos, "atan": atan, "sinh": sinh, "cosh": cosh, "tanh": tanh,
    "asinh": asinh, "acosh": acosh, "atanh": atanh, "erf": erf, "erfc": erfc,
    "arcsin": arcsin, "arccos": arccos, "arctan": arctan, "arcsinh": arcsinh,
    "arccosh": arccosh, "arctanh": arctanh,
}
_PRIM_OF = {"arcsin": "asin", "arccos": "acos", "arctan": "atan", "arcsinh": "asinh",
            "arccosh": "acosh", "arctanh": "atanh", "absolute": "abs", "fix": "trunc"}


# ---------------------------------------------------------------- keeping the input's dtype
def _abs_check(t: Tensor) -> None:
    reject_bool(t, "abs_cpu")


def _floor_check(t: Tensor) -> None:
    reject_bool(t, "floor_vml_cpu")


def _ceil_check(t: Tensor) -> None:
    reject_bool(t, "ceil_vml_cpu")


def _trunc_check(t: Tensor) -> None:
    reject_bool(t, "trunc_vml_cpu")


def _frac_check(t: Tensor) -> None:
    require_float(t, "frac_cpu")


abs = same_unary("abs", "Absolute value.", check=_abs_check)  # noqa: A001
absolute = same_unary("absolute", "Absolute value.", prim="abs", check=_abs_check)
sign = same_unary("sign", "The sign (-1, 0 or 1; 0 for nan).")
floor = same_unary("floor", "Round down.", check=_floor_check)
ceil = same_unary("ceil", "Round up.", check=_ceil_check)
trunc = same_unary("trunc", "Round toward zero.", check=_trunc_check)
fix = same_unary("fix", "Round toward zero.", prim="trunc", check=_trunc_check)
frac = same_unary("frac", "The fractional part, ``x - trunc(x)``.", check=_frac_check)

_SAME_UNARY = {
    "abs": (abs, _abs_check), "absolute": (absolute, _abs_check), "sign": (sign, None),
    "floor": (floor, _floor_check), "ceil": (ceil, _ceil_check), "trunc": (trunc, _trunc_check),
    "fix": (fix, _trunc_check), "frac": (frac, _frac_check),
}


def round(input: Tensor, *, decimals: int | None = None) -> Tensor:  # noqa: A001
    """Round half to even, optionally to `decimals` places (``RoundBackward1``, also for an
    explicit ``decimals=0``: PyTorch's ``round.decimals`` overload).

    Mirrors: ``torch.round``.
    """
    if decimals is None:
        reject_bool(input, "round_vml_cpu")
        return bind(P["round"], (input,))
    if decimals == 0 and input._data.dtype.kind in "biu":  # that overload's kernel for 0
        raise NotImplementedError(f"\"round_vml_cpu\" not implemented for "
                                  f"'{input.dtype.scalar_type}'")
    require_float(input, "round_cpu")
    return bind(P["round_decimals"], (input,), {"decimals": decimals})


@tensor_arguments
def square(input: Tensor) -> Tensor:
    """``input ** 2`` (``PowBackward0``; bool squares to int64 as in PyTorch).

    Mirrors: ``torch.square``.
    """
    if input._data.dtype.kind == "b":
        from hookgrad._dtypes import int64

        return bind(P["pow"], (input,), {"exponent": 2}, int64)
    return bind(P["pow"], (input,), {"exponent": 2})


def atan2(input: Tensor, other: Tensor) -> Tensor:
    """Elementwise ``atan(input / other)`` in the correct quadrant.

    Mirrors: ``torch.atan2``.
    """
    return binary(P["atan2"], input, other, float_result=True)


arctan2 = atan2


# ---------------------------------------------------------------- lerp / addcmul / addcdiv
def _lerp_args(input: Tensor, end: Tensor, weight: Any) -> tuple[Any, tuple, dict]:
    if input._data.dtype.kind not in "fcV":
        raise NotImplementedError(
            f'"lerp_kernel_scalar" not implemented for \'{type_name(input)}\'')
    for name, t in (("end", end), ("weight", weight)):
        if isinstance(t, Tensor) and t._data.dtype != input._data.dtype:
            raise RuntimeError(
                f"expected dtype {_c_name(input)} for `{name}` but got dtype {_c_name(t)}")
    shapes = [t._data.shape for t in (input, end, weight) if isinstance(t, Tensor)]
    if any(s != shapes[0] for s in shapes):
        check_broadcast_all(shapes)
    if isinstance(weight, Tensor):
        return P["lerp_tensor"], (input, end, weight), {}
    return P["lerp"], (input, end), {"weight": weight}


def _c_name(t: Tensor) -> str:
    return {"float32": "float", "float64": "double", "float16": "c10::Half"}.get(
        t.dtype.name, t.dtype.name)


def lerp(input: Tensor, end: Tensor, weight: Any) -> Tensor:
    """``input + weight * (end - input)`` (``LerpBackward0`` scalar / ``LerpBackward1`` tensor).

    Mirrors: ``torch.lerp``.
    """
    prim, tensors, params = _lerp_args(input, end, weight)
    return bind(prim, tensors, params)


def lerp_(self: Tensor, end: Tensor, weight: Any) -> Tensor:
    """Mirrors: ``torch.Tensor.lerp_``."""
    prim, tensors, params = _lerp_args(self, end, weight)
    return bind_inplace(prim, self, tensors, params)


def _addc_value(value: Any, tensors: tuple, cast: Any) -> Any:
    """`value` as ATen reads it: converted to the result's type (an integral result truncates a
    float value), never taking part in type promotion."""
    kind = (cast.np if cast is not None else tensors[0]._data.dtype).kind
    if kind in "iu" and isinstance(value, float):
        return int(value)
    return value


def _addc_args(name: str, input: Tensor, tensor1: Tensor, tensor2: Tensor) -> tuple[tuple, Any]:
    tensors, cast = promote(input, tensor1, tensor2)
    kind = (cast.np if cast is not None else tensors[0]._data.dtype).kind
    if kind == "b":
        raise NotImplementedError(f'"{name}_cpu_out" not implemented for \'Bool\'')
    # ATen's addcdiv checks the two operands (integral or bool both), whatever `input` promotes to
    if name == "addcdiv" and (kind in "iu" or all(
            t._data.dtype.kind in "iub" for t in (tensor1, tensor2) if isinstance(t, Tensor))):
        raise RuntimeError(
            "Integer division with addcdiv is no longer supported, and in a future  release "
            "addcdiv will perform a true division of tensor1 and tensor2. The historic "
            "addcdiv behavior can be implemented as (input + value * torch.trunc(tensor1 / "
            "tensor2)).to(input.dtype) for integer inputs and as (input + value * tensor1 / "
            "tensor2) for float inputs. The future addcdiv behavior is just the latter "
            "implementation: (input + value * tensor1 / tensor2), for all dtypes.")
    return tensors, cast


def addcmul(input: Tensor, tensor1: Tensor, tensor2: Tensor, *, value: Any = 1) -> Tensor:
    """``input + value * tensor1 * tensor2``.

    Mirrors: ``torch.addcmul``.
    """
    tensors, cast = _addc_args("addcmul", input, tensor1, tensor2)
    return bind(P["addcmul"], tensors, {"value": _addc_value(value, tensors, cast)}, cast)


def addcdiv(input: Tensor, tensor1: Tensor, tensor2: Tensor, *, value: Any = 1) -> Tensor:
    """``input + value * tensor1 / tensor2``.

    Mirrors: ``torch.addcdiv``.
    """
    tensors, cast = _addc_args("addcdiv", input, tensor1, tensor2)
    return bind(P["addcdiv"], tensors, {"value": _addc_value(value, tensors, cast)}, cast)


def addcmul_(self: Tensor, tensor1: Tensor, tensor2: Tensor, *, value: Any = 1) -> Tensor:
    """Mirrors: ``torch.Tensor.addcmul_``."""
    tensors, cast = _addc_args("addcmul", self, tensor1, tensor2)
    return bind_inplace(P["addcmul"], self, tensors,
                        {"value": _addc_value(value, tensors, cast)}, cast)


def addcdiv_(self: Tensor, tensor1: Tensor, tensor2: Tensor, *, value: Any = 1) -> Tensor:
    """Mirrors: ``torch.Tensor.addcdiv_``."""
    tensors, cast = _addc_args("addcdiv", self, tensor1, tensor2)
    return bind_inplace(P["addcdiv"], self, tensors,
                        {"value": _addc_value(value, tensors, cast)}, cast)


# ---------------------------------------------------------------- fill / zero
def _fill_value(value: Any) -> Any:
    if not isinstance(value, Tensor):
        check_number(value, "fill_", "value", 1)
    if isinstance(value, Tensor) and value._data.ndim != 0:
        raise RuntimeError(
            "fill_ only supports 0-dimension value tensor but got tensor with "
            f"{value._data.ndim} dimensions.")
    return value


def fill(input: Tensor, value: Any) -> Tensor:
    """A tensor like `input` filled with `value` (``FillBackward0``/``FillBackward1``).

    Mirrors: ``torch.fill``.
    """
    if isinstance(_fill_value(value), Tensor):
        return bind(P["fill_tensor"], (input, value))
    check_scalar_fits(value, input._data.dtype)
    return bind(P["fill"], (input,), {"value": value})


def fill_(self: Tensor, value: Any) -> Tensor:
    """Fill in place (``FillBackward2``, or ``FillBackward3`` for a tensor value).

    Mirrors: ``torch.Tensor.fill_``.
    """
    if isinstance(_fill_value(value), Tensor):
        if has_internal_overlap(self._data):  # the tensor overload's copy checks the overlap
            raise RuntimeError(
                "unsupported operation: more than one element of the written-to tensor refers "
                "to a single memory location. Please clone() the tensor before performing the "
                "operation.")
        return bind_inplace(P["fill_"], self, (self, value))
    check_scalar_fits(value, self._data.dtype)
    return bind_inplace(P["fill_scalar_"], self, (self,), {"value": value})


def zero_(self: Tensor) -> Tensor:
    """Fill with zeros in place (``ZeroBackward0``).

    Mirrors: ``torch.Tensor.zero_``.
    """
    return bind_inplace(P["zero_"], self, (self,))


def nan_to_num(input: Tensor, nan: float = 0.0, posinf: float | None = None,
               neginf: float | None = None) -> Tensor:
    """nan, +inf and -inf replaced (by 0 and the dtype's extremes unless given).

    Mirrors: ``torch.nan_to_num``.
    """
    return bind(P["nan_to_num"], (input,), {"nan": nan, "posinf": posinf, "neginf": neginf})


def nan_to_num_(self: Tensor, nan: float = 0.0, posinf: float | None = None,
                neginf: float | None = None) -> Tensor:
    """Mirrors: ``torch.Tensor.nan_to_num_``."""
    params = {"nan": nan, "posinf": posinf, "neginf": neginf}
    return bind_inplace(P["nan_to_num"], self, (self,), params)


# ---------------------------------------------------------------- in-place variants
_inplace: dict[str, Any] = {}
# PyTorch records the in-place inverse hyperbolics with their own (derivative-less) nodes.
_INPLACE_PRIM = {"asinh": "asinh_", "acosh": "acosh_", "atanh": "atanh_", "arcsinh": "asinh_",
                 "arccosh": "acosh_", "arctanh": "atanh_"}
for _name in _FLOAT_UNARY:
    _prim = _INPLACE_PRIM.get(_name, _PRIM_OF.get(_name))
    _inplace[_name + "_"] = inplace_unary(_name, prim=_prim, float_op=True)
for _name, (_, _check) in _SAME_UNARY.items():
    _inplace[_name + "_"] = inplace_unary(_name, prim=_PRIM_OF.get(_name), check=_check)

# Module-level in-place functions PyTorch exposes (torch.sqrt_, torch.abs_...).
exp2_, expm1_, log_, log2_ = (_inplace[n] for n in ("exp2_", "expm1_", "log_", "log2_"))
log10_, log1p_, sqrt_, rsqrt_ = (_inplace[n] for n in ("log10_", "log1p_", "sqrt_", "rsqrt_"))
reciprocal_, sin_, cos_, tan_ = (_inplace[n] for n in ("reciprocal_", "sin_", "cos_", "tan_"))
asin_, acos_, atan_, sinh_ = (_inplace[n] for n in ("asin_", "acos_", "atan_", "sinh_"))
cosh_, tanh_, asinh_, acosh_ = (_inplace[n] for n in ("cosh_", "tanh_", "asinh_", "acosh_"))
atanh_, erf_, erfc_, abs_ = (_inplace[n] for n in ("atanh_", "erf_", "erfc_", "abs_"))
floor_, ceil_, trunc_, frac_ = (_inplace[n] for n in ("floor_", "ceil_", "trunc_", "frac_"))
fix_ = _inplace["fix_"]
_MODULE_INPLACE = ("exp2_", "expm1_", "log_", "log2_", "log10_", "log1p_", "sqrt_", "rsqrt_",
                   "reciprocal_", "sin_", "cos_", "tan_", "asin_", "acos_", "atan_", "sinh_",
                   "cosh_", "tanh_", "asinh_", "acosh_", "atanh_", "erf_", "erfc_", "abs_",
                   "floor_", "ceil_", "trunc_", "frac_", "fix_")


def round_(self: Tensor, *, decimals: int = 0) -> Tensor:
    """Mirrors: ``torch.Tensor.round_``."""
    if decimals == 0:
        reject_bool(self, "round_vml_cpu")
        return bind_inplace(P["round"], self, (self,))
    require_float(self, "round_cpu")
    return bind_inplace(P["round_decimals"], self, (self,), {"decimals": decimals})


def square_(self: Tensor) -> Tensor:
    """Mirrors: ``torch.Tensor.square_``."""
    return bind_inplace(P["pow"], self, (self,), {"exponent": 2})


def atan2_(self: Tensor, other: Tensor) -> Tensor:
    """Mirrors: ``torch.Tensor.atan2_``."""
    tensors, cast = promote(self, other)
    cast = cast or float_cast(self)
    return bind_inplace(P["atan2"], self, tensors, {}, cast)


__all__ = [
    *_FLOAT_UNARY, *_SAME_UNARY, *_MODULE_INPLACE, "round", "round_", "square", "square_",
    "atan2", "arctan2", "lerp", "addcmul", "addcdiv", "fill", "fill_", "zero_", "nan_to_num",
    "nan_to_num_",
]

METHODS = {
    **_FLOAT_UNARY, **{k: v[0] for k, v in _SAME_UNARY.items()}, **_inplace,
    "round": round, "round_": round_, "square": square, "square_": square_, "atan2": atan2,
    "arctan2": atan2, "atan2_": atan2_, "arctan2_": atan2_,
    "lerp": lerp, "lerp_": lerp_, "addcmul": addcmul, "addcmul_": addcmul_,
    "addcdiv": addcdiv, "addcdiv_": addcdiv_, "fill_": fill_, "zero_": zero_,
    "nan_to_num": nan_to_num, "nan_to_num_": nan_to_num_,
}
