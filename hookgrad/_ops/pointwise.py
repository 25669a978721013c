"""Elementwise arithmetic primitives (PyTorch docs: "Pointwise Ops", arithmetic part).

Rules receive hookgrad Tensors and use Tensor methods, which resolve at call time (layer 4
installs them), so double backward works without extra code. `unbroadcast` is the one
"undo broadcasting" step of every binary rule. Formulas, saved values and their pack order follow
PyTorch's ``derivatives.yaml`` as observed through saved-tensor hooks; where a rule names a value
it does not compute with, it is so that the value is saved exactly when PyTorch saves it.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from hookgrad._backend import namespace_of
from hookgrad._ops._elementwise import keep, quiet, unbroadcast, zeros
from hookgrad._ops.registry import defop

__all__ = ["unbroadcast", "int_power", "not_implemented"]


def _scaled(g: Any, alpha: Any) -> Any:
    return g if alpha == 1 else g * alpha


def not_implemented(name: str) -> Any:
    """A rule for ops PyTorch records with a ``NotImplemented`` node: backward raises."""

    def rule(grad: Any) -> Any:
        raise RuntimeError(f"derivative for aten::{name} is not implemented")

    return rule


def _not_implemented_jvp(name: str) -> Any:
    def rule(t: Any) -> Any:
        raise NotImplementedError(
            f"Trying to use forward AD with {name} that does not support it because it has not "
            "been implemented yet."
        )

    return rule


# ---------------------------------------------------------------- add / sub / mul / div
defop("add", impl=quiet(lambda self, other, alpha=1: np.add(
          self, other if alpha == 1 else other * alpha)),
      inputs=("self", "other"), params=("alpha",),
      vjp={"self": lambda grad, self_shape: unbroadcast(grad, self_shape),
           "other": lambda grad, other_shape, alpha: unbroadcast(_scaled(grad, alpha),
                                                                 other_shape)},
      jvp="linear")

defop("sub", impl=quiet(lambda self, other, alpha=1: np.subtract(
          self, other if alpha == 1 else other * alpha)),
      inputs=("self", "other"), params=("alpha",),
      vjp={"self": lambda grad, self_shape: unbroadcast(grad, self_shape),
           "other": lambda grad, other_shape, alpha: unbroadcast(-_scaled(grad, alpha),
                                                                 other_shape)},
      jvp="linear")

defop("rsub", impl=quiet(lambda self, other, alpha=1: np.subtract(
          other, self if alpha == 1 else self * alpha)),
      inputs=("self",), params=("other", "alpha"), node_name="RsubBackward1",
      vjp={"self": lambda grad, alpha: -_scaled(grad, alpha)},
      jvp="elementwise")  # affine in self (``other`` is a constant): not "linear"

_multiply = quiet(np.multiply)


defop("mul", impl=_multiply, inputs=("self", "other"), saves=("other", "self"),
      # unbroadcast(grad * factor): one expression each (on every backward's hot path)
      vjp={"self": lambda grad, other, self_shape, ops: ops.sum_to_size(ops.mul(grad, other),
                                                                        self_shape),
           "other": lambda grad, self, other_shape, ops: ops.sum_to_size(ops.mul(grad, self),
                                                                         other_shape)},
      jvp={"self": lambda t, other: t * other, "other": lambda t, self: self * t})

defop("div", impl=quiet(np.true_divide), inputs=("self", "other"), saves=("other", "self"),
      vjp={"self": lambda grad, other, self_shape: unbroadcast(grad / other, self_shape),
           "other": lambda grad, self, other, other_shape: unbroadcast(
               -grad * (self / other / other), other_shape)},
      jvp={"self": lambda t, other: t / other,
           "other": lambda t, self, other: -t * (self / other / other)})

defop("neg", impl=np.negative, vjp={"self": lambda grad: -grad}, jvp="linear")

# ---------------------------------------------------------------- exponentials
defop("exp", impl=quiet(np.exp), saves=("result",),
      vjp={"self": lambda grad, result: grad * result}, jvp="elementwise")


# ---------------------------------------------------------------- pow (three overloads)
def int_power(base: Any, exponent: Any) -> Any:
    """Integer power with PyTorch's rule for negative exponents (1, +-1 or 0, never an error)."""
    xp = namespace_of(exponent if hasattr(exponent, "dtype") else base)
    base, exponent = xp.asarray(base), xp.asarray(exponent)
    neg = exponent < 0
    if not neg.any():
        return np.power(base, exponent)
    pos = np.power(base, np.where(neg, 0, exponent))
    one = base == 1
    minus = base == -1
    special = np.where(one, 1, np.where(minus, np.where(exponent % 2 == 0, 1, -1), 0))
    return np.where(neg, special.astype(pos.dtype), pos)


@quiet
def _pow_impl(self: Any, exponent: Any) -> Any:
    if self.dtype.kind == "b":  # NumPy's bool power answers int8; PyTorch keeps bool:
        return (self & self) if exponent else (self | ~self)  # x ** True = x, x ** False = 1
    if self.dtype.kind in "iu" and getattr(exponent, "dtype", None) is not None:
        return int_power(self, exponent)
    return np.power(self, exponent)


@quiet
def _pow_scalar_impl(exponent: Any, self: Any) -> Any:
    if exponent.dtype.kind in "iu":  # in the exponent's type, as the scalar is wrapped
        return int_power(self, exponent).astype(exponent.dtype, copy=False)
    return np.power(exponent.dtype.type(self), exponent)


def _pow_scalar_vjp(grad: Any, self: Any, exponent: Any, ops: Any) -> Any:
    if exponent == 0:
        return ops.zeros_like(self)
    return ops.mul(grad, ops.mul(ops.pow(self, exponent - 1), exponent))


def _pow_self_vjp(grad: Any, self: Any, exponent: Any, self_shape: tuple) -> Any:
    g = grad * (exponent * self.pow(exponent - 1))
    return unbroadcast(keep(g, exponent._data != 0), self_shape)


def _log_or_zero(self: Any, exponent: Any, result: Any) -> Any:
    """``result * log(self)``, zero where ``self == 0`` and ``exponent >= 0`` (PyTorch)."""
    base = self if self._data.dtype == result._data.dtype else self.to(result.dtype)
    return keep(result * base.log(), ~((base._data == 0) & (exponent._data >= 0)))


def _pow_exponent_vjp(grad: Any, self: Any, exponent: Any, result: Any,
                      exponent_shape: tuple) -> Any:
    return unbroadcast(grad * _log_or_zero(self, exponent, result), exponent_shape)


def _scalar_log(x: float) -> float:
    # PyTorch takes the log of the Scalar base without complaint: nan below zero.
    if x > 0:
        return math.log(x)
    return -math.inf if x == 0 else math.nan


def _pow_base_scalar_vjp(grad: Any, exponent: Any, result: Any, self: Any) -> Any:
    if self == 0:  # 0 ** e: zero gradient where e >= 0 (PyTorch), else result * log(0)
        return grad * keep(result * -math.inf, exponent._data < 0)
    return grad * (result * _scalar_log(self))


# a ** 2: saves self (and the exponent as a number).
defop("pow", impl=_pow_impl, params=("exponent",), saves=("self",), node_name="PowBackward0",
      vjp={"self": _pow_scalar_vjp}, jvp="elementwise")

# a ** b: PyTorch always saves the result, so the self rule names it too.
defop("pow_tensor", impl=_pow_impl, inputs=("self", "exponent"),
      saves=("exponent", "self", "result"), node_name="PowBackward1",
      vjp={"self": lambda grad, self, exponent, result, self_shape: _pow_self_vjp(
               grad, self, exponent, self_shape),
           "exponent": _pow_exponent_vjp},
      jvp={"self": lambda t, self, exponent: keep(t * (exponent * self.pow(exponent - 1)),
                                                   exponent._data != 0),
           "exponent": lambda t, self, exponent, result: t * _log_or_zero(self, exponent,
                                                                          result)})

# 2 ** a: the scalar base is the param `self` (PyTorch's ``_saved_self``).
defop("pow_scalar", impl=_pow_scalar_impl, inputs=("exponent",), params=("self",),
      saves=("exponent", "result"), node_name="PowBackward2",
      vjp={"exponent": _pow_base_scalar_vjp}, jvp="elementwise")

# ---------------------------------------------------------------- rounding
def _int_copy(fn: Any) -> Any:
    """Rounding an integer tensor is a copy in PyTorch (NumPy's floor would return floats)."""
    def impl(self: Any) -> Any:
        return self.copy() if self.dtype.kind in "biu" else fn(self)

    return impl


_ZERO = {"self": lambda grad: zeros(grad)}
defop("floor", impl=_int_copy(np.floor), vjp=_ZERO, jvp="elementwise")
defop("ceil", impl=_int_copy(np.ceil), vjp=_ZERO, jvp="elementwise")
defop("trunc", impl=_int_copy(np.trunc), vjp=_ZERO, jvp="elementwise")
defop("round", impl=_int_copy(np.rint), vjp=_ZERO, jvp="elementwise")


@quiet
def _round_decimals(self: Any, decimals: int) -> Any:
    # PyTorch scales in the tensor's own dtype, then rounds half to even.
    scale = self.dtype.type(10.0 ** abs(decimals))
    if decimals < 0:
        return np.rint(self / scale) * scale
    return np.rint(self * scale) / scale


defop("round_decimals", impl=_round_decimals, params=("decimals",), node_name="RoundBackward1",
      vjp=_ZERO, jvp="elementwise")
defop("frac", impl=quiet(lambda self: self - np.trunc(self)), vjp={"self": lambda grad: grad},
      jvp="elementwise")

# ---------------------------------------------------------------- division family
def _check_int_divisor(self: Any, other: Any) -> None:
    # ATen's kernel checks each divisor it reads: an empty result reads none
    if other.dtype.kind in "biu" and self.dtype.kind in "biu" and self.size and (other == 0).any():
        raise RuntimeError("ZeroDivisionError")


@quiet
def _div_trunc(self: Any, other: Any) -> Any:
    if self.dtype.kind in "biu":
        _check_int_divisor(self, other)
        q = np.floor_divide(self, other)
        fix = (np.remainder(self, other) != 0) & ((self < 0) != (other < 0))
        return q + fix.astype(q.dtype)
    return np.trunc(np.true_divide(self, other))


@quiet
def _div_floor(self: Any, other: Any) -> Any:
    _check_int_divisor(self, other)
    return np.floor_divide(self, other)


def _div_mode_impl(self: Any, other: Any, rounding_mode: str) -> Any:
    return _div_trunc(self, other) if rounding_mode == "trunc" else _div_floor(self, other)


# div(..., rounding_mode=...): zero gradients, computed as ``grad * 0`` like PyTorch (so they
# keep a graph under create_graph); `other` is saved as PyTorch saves it.
defop("div_mode", impl=_div_mode_impl, inputs=("self", "other"), params=("rounding_mode",),
      saves=("other", "self"), node_name="DivBackward2",
      vjp={"self": lambda grad, other, self_shape: unbroadcast(grad * 0, self_shape),
           "other": lambda grad, self, other, other_shape: unbroadcast(grad * 0, other_shape)},
      jvp={"self": lambda t: t * 0, "other": lambda t: t * 0})

defop("floor_divide", impl=_div_floor, inputs=("self", "other"),
      node_name="torch::autograd::NotImplemented",
      vjp={"self": not_implemented("floor_divide"), "other": not_implemented("floor_divide")},
      jvp={"self": _not_implemented_jvp("floor_divide"),
           "other": _not_implemented_jvp("floor_divide")})


@quiet
def _fmod(self: Any, other: Any) -> Any:
    _check_int_divisor(self, np.asarray(other) if not hasattr(other, "dtype") else other)
    return np.fmod(self, other)


@quiet
def _remainder(self: Any, other: Any) -> Any:
    _check_int_divisor(self, np.asarray(other) if not hasattr(other, "dtype") else other)
    return np.remainder(self, other)


def _quotient_vjp(mode: str) -> Any:
    def rule(grad: Any, self: Any, other: Any, other_shape: tuple) -> Any:
        return unbroadcast(-grad * self.div(other, rounding_mode=mode), other_shape)

    return rule


defop("fmod", impl=_fmod, params=("other",), node_name="FmodBackward0",
      vjp={"self": lambda grad: grad}, jvp="elementwise")
defop("fmod_tensor", impl=_fmod, inputs=("self", "other"), saves=("other", "self"),
      node_name="FmodBackward1",
      vjp={"self": lambda grad, self_shape: unbroadcast(grad, self_shape),
           "other": _quotient_vjp("trunc")},
      jvp={"self": lambda t: t,
           "other": lambda t, self, other: -t * self.div(other, rounding_mode="trunc")})
defop("remainder", impl=_remainder, params=("other",), node_name="RemainderBackward0",
      vjp={"self": lambda grad: grad}, jvp="elementwise")
defop("remainder_tensor", impl=_remainder, inputs=("self", "other"), saves=("other", "self"),
      node_name="RemainderBackward1",
      vjp={"self": lambda grad, self_shape: unbroadcast(grad, self_shape),
           "other": _quotient_vjp("floor")},
      jvp={"self": lambda t: t,
           "other": lambda t, self, other: -t * self.div(other, rounding_mode="floor")})
# remainder(Scalar, Tensor) has no derivative in PyTorch: a NotImplemented node.
defop("remainder_scalar", impl=lambda other, self: _remainder(
          other.dtype.type(self), other),
      inputs=("other",), params=("self",), node_name="torch::autograd::NotImplemented",
      vjp={"other": not_implemented("remainder")},
      jvp={"other": _not_implemented_jvp("remainder")})


# ---------------------------------------------------------------- lerp / addcmul / addcdiv
@quiet
def _lerp_impl(self: Any, end: Any, weight: Any) -> Any:
    # PyTorch's two-sided formula: exact at weight 0 and at weight 1.
    diff = end - self
    if not hasattr(weight, "dtype"):
        return self + weight * diff if abs(weight) < 0.5 else end - diff * (1 - weight)
    return np.where(np.abs(weight) < 0.5, self + weight * diff, end - diff * (1 - weight))


defop("lerp", impl=_lerp_impl, inputs=("self", "end"), params=("weight",),
      node_name="LerpBackward0",
      vjp={"self": lambda grad, weight, self_shape: unbroadcast(grad * (1 - weight), self_shape),
           "end": lambda grad, weight, end_shape: unbroadcast(grad * weight, end_shape)},
      jvp="linear")

defop("lerp_tensor", impl=_lerp_impl, inputs=("self", "end", "weight"),
      saves=("end", "self", "weight"), node_name="LerpBackward1",
      vjp={"self": lambda grad, weight, self_shape: unbroadcast(grad * (1 - weight), self_shape),
           "end": lambda grad, weight, end_shape: unbroadcast(grad * weight, end_shape),
           "weight": lambda grad, end, self, weight, weight_shape: unbroadcast(
               grad * (end - self), weight_shape)},
      jvp={"self": lambda t, weight: t * (1 - weight), "end": lambda t, weight: t * weight,
           "weight": lambda t, end, self: t * (end - self)})

defop("addcmul",
      impl=quiet(lambda self, tensor1, tensor2, value=1: self + value * tensor1 * tensor2),
      inputs=("self", "tensor1", "tensor2"), params=("value",), saves=("tensor1", "tensor2"),
      vjp={"self": lambda grad, self_shape: unbroadcast(grad, self_shape),
           "tensor1": lambda grad, tensor2, value, tensor1_shape: unbroadcast(
               grad * (tensor2 * value), tensor1_shape),
           "tensor2": lambda grad, tensor1, value, tensor2_shape: unbroadcast(
               grad * (tensor1 * value), tensor2_shape)},
      jvp={"self": lambda t: t, "tensor1": lambda t, tensor2, value: t * (tensor2 * value),
           "tensor2": lambda t, tensor1, value: t * (tensor1 * value)})

defop("addcdiv",
      impl=quiet(lambda self, tensor1, tensor2, value=1: self + value * tensor1 / tensor2),
      inputs=("self", "tensor1", "tensor2"), params=("value",), saves=("tensor1", "tensor2"),
      vjp={"self": lambda grad, self_shape: unbroadcast(grad, self_shape),
           "tensor1": lambda grad, tensor2, value, tensor1_shape: unbroadcast(
               grad * (value / tensor2), tensor1_shape),
           "tensor2": lambda grad, tensor1, tensor2, value, tensor2_shape: unbroadcast(
               -grad * (value * tensor1 / (tensor2 * tensor2)), tensor2_shape)},
      jvp={"self": lambda t: t, "tensor1": lambda t, tensor2, value: t * (value / tensor2),
           "tensor2": lambda t, tensor1, tensor2, value: -t * (value * tensor1 /
                                                               (tensor2 * tensor2))})


# ---------------------------------------------------------------- fill / zero
def _fill_impl(self: Any, value: Any) -> Any:
    return namespace_of(self).full_like(self, value)


def _sum_all(grad: Any) -> Any:
    return grad.sum()


_FILL_SELF = {"self": lambda grad: zeros(grad)}
# Out of place (torch.fill) and in place (Tensor.fill_) are distinct nodes in PyTorch. The
# in-place fill with a tensor value (FillBackward3) is the shape family's ``fill_`` primitive,
# which index assignment uses too.
defop("fill", impl=_fill_impl, params=("value",), node_name="FillBackward0", vjp=_FILL_SELF,
      jvp="elementwise")
defop("fill_tensor", impl=_fill_impl, inputs=("self", "value"), node_name="FillBackward1",
      vjp={"self": lambda grad: zeros(grad), "value": lambda grad: _sum_all(grad)},
      jvp={"self": lambda t: zeros(t), "value": lambda t, self_shape: t.expand(self_shape)})
defop("fill_scalar_", impl=_fill_impl, params=("value",), node_name="FillBackward2",
      vjp=_FILL_SELF, jvp="elementwise")
defop("zero_", impl=lambda self: namespace_of(self).zeros_like(self), node_name="ZeroBackward0",
      vjp=_FILL_SELF, jvp="elementwise")
