"""Arithmetic ops: ``add``, ``sub``, ``mul``, ``div``, ``neg``, ``exp``, ``pow``,
``floor_divide``, ``remainder``, ``fmod`` and their operators and in-place variants.

Mirrors: ``torch.add`` ... with PyTorch's promotion and node names (``a - 1`` is SubBackward0,
``1 - a`` RsubBackward1, ``2 / a`` is ``reciprocal(a) * 2``, ``a ** 2`` / ``a ** b`` / ``2 ** a``
are PowBackward0 / 1 / 2).
"""

from __future__ import annotations

from typing import Any

from hookgrad._config import GLOBAL
from hookgrad._dispatch import bind, bind_inplace
from hookgrad._functional._common import Number, binary, result_type, to_tensor_like, unary_float
from hookgrad._functional._pw_util import promote, scalar_cast
from hookgrad._ops._checks import check_number, check_operand, check_tensor, not_tensor
from hookgrad._ops._shapes import check_inplace_broadcast
from hookgrad._ops.registry import PRIMITIVES as P
from hookgrad._tensor import Tensor

__all__ = ["add", "sub", "subtract", "mul", "multiply", "div", "divide", "true_divide", "neg",
           "negative", "exp", "exp_", "rsub", "pow", "float_power", "floor_divide", "remainder",
           "fmod", "neg_", "negative_"]

_EMPTY: dict = {}


def _bool_sub_check(a: Any, b: Any) -> None:
    a_bool = isinstance(a, bool) or isinstance(a, Tensor) and a._data.dtype.kind == "b"
    b_bool = isinstance(b, bool) or isinstance(b, Tensor) and b._data.dtype.kind == "b"
    if a_bool and b_bool:
        raise RuntimeError("Subtraction, the `-` operator, with two bool tensors is not "
                           "supported. Use the `^` or `logical_xor()` operator instead.")
    if a_bool or b_bool:
        raise RuntimeError("Subtraction, the `-` operator, with a bool tensor is not supported. "
                           "If you are trying to invert a mask, use the `~` or `logical_not()` "
                           "operator instead.")


def _is_bool(x: Any) -> bool:
    return isinstance(x, bool) or (isinstance(x, Tensor) and x._data.dtype.kind == "b")


def _check_alpha(input: Any, other: Any, alpha: Any) -> None:
    """PyTorch's ``alpha_check``: alpha must not be wider than the result's dtype kind."""
    check_number(alpha, "add", "alpha", 3)
    rt = result_type(input, other)
    if isinstance(alpha, bool) and rt.name != "bool":
        raise RuntimeError("Boolean alpha only supported for Boolean results.")
    if isinstance(alpha, float) and not rt.is_floating_point:
        raise RuntimeError("For integral input tensors, argument alpha must not be a floating "
                           "point number.")


def add(input: Any, other: Any, *, alpha: Any = 1) -> Tensor:
    """``input + alpha * other``.

    Mirrors: ``torch.add``.
    """
    if alpha != 1 or type(alpha) is not int:
        _check_alpha(input, other, alpha)
        if type(alpha) is int and result_type(input, other).name == "bool":
            alpha = bool(alpha)  # ATen casts alpha to the result's type: 2 is True
    return binary(P["add"], input, other, {"alpha": alpha} if alpha != 1 else None)


def sub(input: Any, other: Any, *, alpha: Any = 1) -> Tensor:
    """``input - alpha * other``.

    Mirrors: ``torch.sub``.
    """
    if _is_bool(input) or _is_bool(other):  # a bool tensor or a Python bool operand
        _bool_sub_check(input, other)
    if alpha != 1 or type(alpha) is not int:
        _check_alpha(input, other, alpha)
    return binary(P["sub"], input, other, {"alpha": alpha} if alpha != 1 else None)


subtract = sub


def rsub(input: Tensor, other: Any, *, alpha: Any = 1) -> Tensor:
    """``other - alpha * input``.

    Mirrors: ``torch.rsub``.
    """
    if isinstance(other, Tensor):
        return sub(other, input, alpha=alpha)
    if input._data.dtype.kind == "b" or isinstance(other, bool):
        _bool_sub_check(input, other)
    rt = result_type(input, other)
    cast = rt if input._data.dtype != rt.np else None
    return bind(P["rsub"], (input,), {"other": other, "alpha": alpha}, cast)


def mul(input: Any, other: Any) -> Tensor:
    """Mirrors: ``torch.mul``."""
    return binary(P["mul"], input, other)


multiply = mul


def div(input: Any, other: Any, *, rounding_mode: str | None = None) -> Tensor:
    """True division, or rounded with ``rounding_mode`` ``'trunc'``/``'floor'``.

    Mirrors: ``torch.div``.
    """
    if rounding_mode is not None:
        from hookgrad._functional.pointwise import _div_rounding

        return _div_rounding(input, other, rounding_mode)
    if not isinstance(input, Tensor):
        # 2 / a is reciprocal(a) * 2 in PyTorch (ReciprocalBackward0 then MulBackward0).
        return mul(other.reciprocal(), input)  # type: ignore[attr-defined]
    return binary(P["div"], input, other, float_result=True)


divide = div
true_divide = div


def neg(input: Tensor) -> Tensor:
    """Mirrors: ``torch.neg``."""
    try:
        kind = input._data.dtype.kind
    except AttributeError:
        raise not_tensor("neg", input) from None
    if kind == "b":
        raise RuntimeError(
            "Negation, the `-` operator, on a bool tensor is not supported. If you are trying to "
            "invert a mask, use the `~` or `logical_not()` operator instead."
        )
    return bind(P["neg"], (input,))


negative = neg


def exp(input: Tensor) -> Tensor:
    """Mirrors: ``torch.exp``."""
    return unary_float(P["exp"], input)


# ---------------------------------------------------------------- pow
def _pow_args(input: Any, exponent: Any) -> tuple[Any, tuple, dict, Any]:
    """Pick PyTorch's overload: Tensor_Scalar (0), Tensor_Tensor (1) or Scalar (2)."""
    if not isinstance(input, Tensor):
        check_operand(input, "pow", "self", 1)
        check_tensor(exponent, "pow", "exponent", 2)
        rt = result_type(input, exponent)
        cast = rt if exponent._data.dtype != rt.np else None
        return P["pow_scalar"], (exponent,), {"self": input}, cast
    if isinstance(exponent, Tensor):
        tensors, cast = promote(input, exponent)
        return P["pow_tensor"], tensors, _EMPTY, cast
    try:
        cast = scalar_cast(input, exponent)
    except AttributeError:  # free unless raised: an exponent that is not a number
        check_operand(exponent, "pow", "exponent", 2)
        raise
    kind = (cast.np if cast is not None else input._data.dtype).kind
    if kind in "iub" and exponent < 0:
        raise RuntimeError("Integers to negative integer powers are not allowed.")
    return P["pow"], (input,), {"exponent": exponent}, cast


def _no_bool(kernel: str, tensors: tuple, cast: Any) -> None:
    """PyTorch's kernels without a Bool instance: NotImplementedError naming the kernel."""
    if (cast.np if cast is not None else tensors[0]._data.dtype).kind == "b":
        raise NotImplementedError(f"\"{kernel}\" not implemented for 'Bool'")


def pow(input: Any, exponent: Any) -> Tensor:  # noqa: A001
    """``input ** exponent`` (either may be a Python number, not both).

    Mirrors: ``torch.pow``.
    """
    prim, tensors, params, cast = _pow_args(input, exponent)
    if prim is not P["pow"]:  # a bool tensor to a Python number has a shortcut in PyTorch
        _no_bool("pow", tensors, cast)
    return bind(prim, tensors, params, cast)


def pow_(self: Tensor, exponent: Any) -> Tensor:
    """Mirrors: ``torch.Tensor.pow_``."""
    prim, tensors, params, cast = _pow_args(self, exponent)
    if prim is not P["pow"]:
        _no_bool("pow", tensors, cast)
    return bind_inplace(prim, self, tensors, params, cast)


def float_power(input: Any, exponent: Any) -> Tensor:
    """``pow`` computed in float64 (PyTorch records ``PowBackward0``/``1`` on float64 values).

    Mirrors: ``torch.float_power`` (the cast to float64 is a graph node here).
    """
    from hookgrad._dtypes import float64

    if isinstance(input, Tensor):
        input = input.to(float64)  # type: ignore[attr-defined]
    if isinstance(exponent, Tensor):
        exponent = exponent.to(float64)  # type: ignore[attr-defined]
    elif isinstance(input, Tensor):
        exponent = float(exponent)
    return pow(input, exponent)


# ---------------------------------------------------------------- division family
def floor_divide(input: Any, other: Any) -> Tensor:
    """``floor(input / other)`` (no derivative in PyTorch: a ``NotImplemented`` node).

    Mirrors: ``torch.floor_divide``.
    """
    (a, b), cast = promote(input, other)
    if (cast.np if cast is not None else a._data.dtype).kind == "b":
        raise NotImplementedError("\"div_floor_cpu\" not implemented for 'Bool'")
    return bind(P["floor_divide"], (a, b), _EMPTY, cast)


def _mod_args(name: str, input: Any, other: Any) -> tuple[Any, tuple, dict, Any]:
    if not isinstance(input, Tensor):
        if name == "fmod":
            raise TypeError("fmod(): argument 'input' (position 1) must be Tensor, not "
                            + type(input).__name__)
        check_operand(input, name, "self", 1)
        check_tensor(other, name, "other", 2)
        rt = result_type(input, other)
        cast = rt if other._data.dtype != rt.np else None
        return P["remainder_scalar"], (other,), {"self": input}, cast
    if isinstance(other, Tensor):
        tensors, cast = promote(input, other)
        return P[name + "_tensor"], tensors, _EMPTY, cast
    try:
        return P[name], (input,), {"other": other}, scalar_cast(input, other)
    except AttributeError:  # free unless raised: an operand that is not a number
        check_operand(other, name, "other", 2)
        raise


def remainder(input: Any, other: Any) -> Tensor:
    """Python-style modulus: the result has the sign of `other`.

    Mirrors: ``torch.remainder``.
    """
    prim, tensors, params, cast = _mod_args("remainder", input, other)
    _no_bool("remainder_cpu", tensors, cast)
    return bind(prim, tensors, params, cast)


def fmod(input: Tensor, other: Any) -> Tensor:
    """C-style modulus: the result has the sign of `input`.

    Mirrors: ``torch.fmod``.
    """
    prim, tensors, params, cast = _mod_args("fmod", input, other)
    _no_bool("fmod_cpu", tensors, cast)
    return bind(prim, tensors, params, cast)


def _mod_inplace(name: str) -> Any:
    def method(self: Tensor, other: Any) -> Tensor:
        prim, tensors, params, cast = _mod_args(name, self, other)
        _no_bool(name + "_cpu", tensors, cast)
        return bind_inplace(prim, self, tensors, params, cast)

    method.__name__ = method.__qualname__ = name + "_"
    method.__doc__ = f"Mirrors: ``torch.Tensor.{name}_``."
    return method


def floor_divide_(self: Tensor, other: Any) -> Tensor:
    """Mirrors: ``torch.Tensor.floor_divide_``."""
    (a, b), cast = promote(self, other)
    return bind_inplace(P["floor_divide"], self, (a, b), _EMPTY, cast)


# ---------------------------------------------------------------- in-place methods
def _inplace_binary(name: str) -> Any:
    prim = P[name]

    def method(self: Tensor, other: Any, *, alpha: Any = 1) -> Tensor:
        if name == "sub" and (self._data.dtype.kind == "b" or _is_bool(other)):
            _bool_sub_check(self, other)
        o = to_tensor_like(other, self)
        rt = result_type(self, o)
        if alpha != 1 or type(alpha) is not int:
            check_number(alpha, name + "_", "alpha", 2)
            _check_alpha(self, o, alpha)
            if type(alpha) is int and rt.name == "bool":
                alpha = bool(alpha)  # ATen casts alpha to the result's type: 2 is True
        params = {"alpha": alpha} if alpha != 1 else _EMPTY
        if o._data.shape != self._data.shape:
            check_inplace_broadcast(self._data.shape, o._data.shape)
        cast = rt if (self._data.dtype != rt.np or o._data.dtype != rt.np) else None
        return bind_inplace(prim, self, (self, o), params, cast)

    method.__name__ = method.__qualname__ = name + "_"
    method.__doc__ = f"Mirrors: ``torch.Tensor.{name}_``."
    return method


def mul_(self: Tensor, other: Any) -> Tensor:
    """Mirrors: ``torch.Tensor.mul_``."""
    (a, b), cast = promote(self, other)
    if b._data.shape != a._data.shape:
        check_inplace_broadcast(a._data.shape, b._data.shape)
    return bind_inplace(P["mul"], self, (a, b), _EMPTY, cast)


def div_(self: Tensor, other: Any, *, rounding_mode: str | None = None) -> Tensor:
    """Mirrors: ``torch.Tensor.div_`` (true division into an integer tensor is an error)."""
    (a, b), cast = promote(self, other)
    if b._data.shape != a._data.shape:
        check_inplace_broadcast(a._data.shape, b._data.shape)
    if rounding_mode is not None:
        if rounding_mode not in ("trunc", "floor"):
            raise RuntimeError("div expected rounding_mode to be one of None, 'trunc', or "
                               f"'floor' but found '{rounding_mode}'")
        return bind_inplace(P["div_mode"], self, (a, b), {"rounding_mode": rounding_mode}, cast)
    if (cast.np if cast is not None else a._data.dtype).kind not in "fcV":
        cast = GLOBAL.default_dtype
    return bind_inplace(P["div"], self, (a, b), _EMPTY, cast)


def neg_(self: Tensor) -> Tensor:
    """Mirrors: ``torch.Tensor.neg_``."""
    if self._data.dtype.kind == "b":
        neg(self)  # raises PyTorch's error
    return bind_inplace(P["neg"], self, (self,))


def exp_(self: Tensor) -> Tensor:
    """Mirrors: ``torch.Tensor.exp_``."""
    cast = None
    if self._data.dtype.kind not in "fcV":
        cast = GLOBAL.default_dtype
    return bind_inplace(P["exp"], self, (self,), _EMPTY, cast)


negative_ = neg_


def _rdiv(self: Tensor, other: Any) -> Tensor:
    return div(other, self)


def _rpow(self: Tensor, other: Any) -> Tensor:
    return pow(other, self)


def _rfloordiv(self: Tensor, other: Any) -> Tensor:
    return floor_divide(other, self)


def _rmod(self: Tensor, other: Any) -> Tensor:
    return remainder(other, self)


def _pos(self: Tensor) -> Tensor:
    if self._data.dtype.kind == "b":
        raise RuntimeError("The `+` operator, on a bool tensor is not supported.")
    return self


def _abs(self: Tensor) -> Tensor:
    return self.abs()  # type: ignore[attr-defined]


_OPERANDS = (Tensor, *Number)  # built once: operators run on the hot path


def _number_or_tensor(fn: Any) -> Any:
    """Reflected operators: non-numeric operands fall back to Python (``NotImplemented``)."""
    def op(self: Tensor, other: Any) -> Any:
        if isinstance(other, _OPERANDS) or hasattr(other, "dtype"):
            return fn(self, other)
        return NotImplemented

    return op


def _mul_operator(self: Tensor, other: Any) -> Any:
    """``t * other`` and ``other * t``: `_number_or_tensor(mul)` with `mul`'s body inline (one
    call less per product, the most frequent operator of elementwise code)."""
    if isinstance(other, _OPERANDS) or hasattr(other, "dtype"):
        return binary(_MUL, self, other)
    return NotImplemented


_MUL = P["mul"]


METHODS = {
    "add": add, "sub": sub, "subtract": sub, "mul": mul, "multiply": mul, "div": div,
    "divide": div, "true_divide": div, "neg": neg, "negative": neg, "exp": exp,
    "pow": pow, "pow_": pow_, "float_power": float_power, "floor_divide": floor_divide,
    "floor_divide_": floor_divide_, "remainder": remainder, "remainder_": _mod_inplace("remainder"),
    "fmod": fmod, "fmod_": _mod_inplace("fmod"),
    "add_": _inplace_binary("add"), "sub_": _inplace_binary("sub"),
    "subtract_": _inplace_binary("sub"), "mul_": mul_, "multiply_": mul_, "div_": div_,
    "divide_": div_, "true_divide_": div_, "neg_": neg_, "negative_": neg_, "exp_": exp_,
    "__add__": _number_or_tensor(add), "__radd__": _number_or_tensor(add),
    "__iadd__": _inplace_binary("add"),
    "__sub__": _number_or_tensor(sub), "__rsub__": _number_or_tensor(rsub),
    "__isub__": _inplace_binary("sub"),
    "__mul__": _mul_operator, "__rmul__": _mul_operator, "__imul__": mul_,
    "__truediv__": _number_or_tensor(div), "__rtruediv__": _number_or_tensor(_rdiv),
    "__itruediv__": div_,
    "__pow__": _number_or_tensor(pow), "__rpow__": _number_or_tensor(_rpow), "__ipow__": pow_,
    "__floordiv__": _number_or_tensor(floor_divide),
    "__rfloordiv__": _number_or_tensor(_rfloordiv), "__ifloordiv__": floor_divide_,
    "__mod__": _number_or_tensor(remainder), "__rmod__": _number_or_tensor(_rmod),
    "__imod__": _mod_inplace("remainder"),
    "__neg__": neg, "__pos__": _pos, "__abs__": _abs,
}
