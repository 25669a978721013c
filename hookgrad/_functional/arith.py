"""Arithmetic ops: ``add``, ``sub``, ``mul``, ``div``, ``neg``, ``exp`` and their operators.

Mirrors: ``torch.add`` ... with PyTorch's promotion and node names (``a - 1`` is SubBackward0,
``1 - a`` RsubBackward1, ``2 / a`` is ``reciprocal(a) * 2``).
"""

from __future__ import annotations

from typing import Any

from hookgrad._dispatch import bind, bind_inplace
from hookgrad._functional._common import binary, result_type, to_tensor_like, unary_float
from hookgrad._ops.registry import PRIMITIVES as P
from hookgrad._tensor import Tensor

__all__ = ["add", "sub", "subtract", "mul", "multiply", "div", "divide", "true_divide", "neg",
           "negative", "exp", "rsub"]


def add(input: Tensor, other: Any, *, alpha: Any = 1) -> Tensor:
    """Mirrors: ``torch.add``."""
    return binary(P["add"], input, other, {"alpha": alpha} if alpha != 1 else None)


def sub(input: Tensor, other: Any, *, alpha: Any = 1) -> Tensor:
    """Mirrors: ``torch.sub``."""
    return binary(P["sub"], input, other, {"alpha": alpha} if alpha != 1 else None)


subtract = sub


def rsub(input: Tensor, other: Any, *, alpha: Any = 1) -> Tensor:
    """``other - alpha * input``. Mirrors: ``torch.rsub``."""
    if isinstance(other, Tensor):
        return sub(other, input, alpha=alpha)
    rt = result_type(input, other)
    cast = rt if input._data.dtype != rt.np else None
    return bind(P["rsub"], (input,), {"other": other, "alpha": alpha}, cast)


def mul(input: Any, other: Any) -> Tensor:
    """Mirrors: ``torch.mul``."""
    return binary(P["mul"], input, other)


multiply = mul


def div(input: Any, other: Any, *, rounding_mode: str | None = None) -> Tensor:
    """Mirrors: ``torch.div`` (``rounding_mode`` ``'trunc'``/``'floor'`` via the pointwise family)."""
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
    if input._data.dtype.kind == "b":
        raise RuntimeError(
            "Negation, the `-` operator, on a bool tensor is not supported. If you are trying to "
            "invert a mask, use the `~` or `logical_not()` operator instead."
        )
    return bind(P["neg"], (input,))


negative = neg


def exp(input: Tensor) -> Tensor:
    """Mirrors: ``torch.exp``."""
    return unary_float(P["exp"], input)


def _inplace_binary(name: str) -> Any:
    prim = P[name]

    def method(self: Tensor, other: Any, *, alpha: Any = 1) -> Tensor:
        params = {"alpha": alpha} if alpha != 1 else {}
        o = to_tensor_like(other, self)
        rt = result_type(self, o)
        cast = rt if (self._data.dtype != rt.np or o._data.dtype != rt.np) else None
        return bind_inplace(prim, self, (self, o), params, cast)

    method.__name__ = name + "_"
    return method


def _inplace_plain(name: str) -> Any:
    prim = P[name]

    def method(self: Tensor, other: Any) -> Tensor:
        o = to_tensor_like(other, self)
        rt = result_type(self, o)
        if name == "div" and not rt.is_floating_point:
            rt = self.dtype
        cast = rt if (self._data.dtype != rt.np or o._data.dtype != rt.np) else None
        return bind_inplace(prim, self, (self, o), {}, cast)

    method.__name__ = name + "_"
    return method


def _inplace_unary(name: str) -> Any:
    prim = P[name]

    def method(self: Tensor) -> Tensor:
        return bind_inplace(prim, self, (self,))

    method.__name__ = name + "_"
    return method


METHODS = {
    "add": add, "sub": sub, "subtract": sub, "mul": mul, "multiply": mul, "div": div,
    "divide": div, "true_divide": div, "neg": neg, "negative": neg, "exp": exp,
    "add_": _inplace_binary("add"), "sub_": _inplace_binary("sub"),
    "mul_": _inplace_plain("mul"), "div_": _inplace_plain("div"),
    "neg_": _inplace_unary("neg"), "exp_": _inplace_unary("exp"),
    "__add__": add, "__radd__": lambda self, other: add(self, other),
    "__iadd__": _inplace_binary("add"),
    "__sub__": sub, "__rsub__": lambda self, other: rsub(self, other),
    "__isub__": _inplace_binary("sub"),
    "__mul__": mul, "__rmul__": lambda self, other: mul(self, other),
    "__imul__": _inplace_plain("mul"),
    "__truediv__": div, "__rtruediv__": lambda self, other: div(other, self),
    "__itruediv__": _inplace_plain("div"),
    "__neg__": neg,
}
