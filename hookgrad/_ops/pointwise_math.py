"""Elementwise math primitives (PyTorch docs: "Pointwise Ops": logs, roots, trigonometry, erf).

Every rule is PyTorch's ``derivatives.yaml`` formula written with Tensor methods, with the same
saved values (``result`` or ``self``) so saved-tensor hooks see what they see in PyTorch.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from hookgrad._backend import has_data, namespace_of
from hookgrad._ops._elementwise import const, drop, quiet, unbroadcast, zeros
from hookgrad._ops._special import special
from hookgrad._ops.activation_backward import TANH_BACKWARD
from hookgrad._ops.registry import defop

__all__ = ["special"]

_LN2 = math.log(2.0)
_LN10 = math.log(10.0)
_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)


# ---------------------------------------------------------------- exponentials and logs
defop("exp2", impl=quiet(np.exp2), saves=("result",),
      vjp={"self": lambda grad, result: grad * result * _LN2}, jvp="elementwise")
defop("expm1", impl=quiet(np.expm1), saves=("result",),
      vjp={"self": lambda grad, result: grad * (result + 1)}, jvp="elementwise")
defop("log", impl=quiet(np.log), saves=("self",),
      vjp={"self": lambda grad, self: grad.div(self)}, jvp="elementwise")
defop("log2", impl=quiet(np.log2), saves=("self",),
      vjp={"self": lambda grad, self: grad / (self * _LN2)}, jvp="elementwise")
defop("log10", impl=quiet(np.log10), saves=("self",),
      vjp={"self": lambda grad, self: grad / (self * _LN10)}, jvp="elementwise")
defop("log1p", impl=quiet(np.log1p), saves=("self",), node_name="Log1PBackward0",
      vjp={"self": lambda grad, self: grad / (self + 1)}, jvp="elementwise")

# ---------------------------------------------------------------- powers and roots
defop("sqrt", impl=quiet(np.sqrt), saves=("result",),
      vjp={"self": lambda grad, result: grad / (2 * result)}, jvp="elementwise")
defop("rsqrt", impl=quiet(lambda self: 1 / np.sqrt(self)), saves=("result",),
      vjp={"self": lambda grad, result: -0.5 * grad * result.pow(3)}, jvp="elementwise")
defop("reciprocal", impl=quiet(np.reciprocal), saves=("result",),
      vjp={"self": lambda grad, result: -grad * (result * result)}, jvp="elementwise")


# ---------------------------------------------------------------- sign and magnitude
def _sign_impl(self: Any) -> Any:
    if self.dtype.kind == "b":
        return self.copy()
    if self.dtype.kind == "f":
        # PyTorch computes (0 < x) - (x < 0): nan has sign 0 (NumPy's sign gives nan).
        out = namespace_of(self).asarray(np.sign(self))
        nan = np.isnan(out)
        if has_data(nan) and nan.any():  # (meta: nothing to write)
            out[nan] = 0
        return out
    return np.sign(self)


def _abs_jvp(t: Any, self: Any) -> Any:
    if self.is_complex():  # |z| is not holomorphic: Re(conj(t) sgn(z)), as PyTorch
        return (t.conj_physical() * self.sgn()).real
    return t * self.sgn()


defop("abs", impl=np.abs, saves=("self",),
      vjp={"self": lambda grad, self: grad * self.sgn()}, jvp={"self": _abs_jvp})
defop("sign", impl=_sign_impl, vjp={"self": lambda grad: zeros(grad)}, jvp="elementwise")

# ---------------------------------------------------------------- trigonometry
defop("sin", impl=quiet(np.sin), saves=("self",),
      vjp={"self": lambda grad, self: grad * self.cos()}, jvp="elementwise")
defop("cos", impl=quiet(np.cos), saves=("self",),
      vjp={"self": lambda grad, self: grad * -self.sin()}, jvp="elementwise")
defop("tan", impl=quiet(np.tan), saves=("result",),
      vjp={"self": lambda grad, result: grad * (1 + result.pow(2))}, jvp="elementwise")
defop("asin", impl=quiet(np.arcsin), saves=("self",),
      vjp={"self": lambda grad, self: grad * (-self * self + 1).rsqrt()}, jvp="elementwise")
defop("acos", impl=quiet(np.arccos), saves=("self",),
      vjp={"self": lambda grad, self: grad * -((-self * self + 1).rsqrt())}, jvp="elementwise")
defop("atan", impl=np.arctan, saves=("self",),
      vjp={"self": lambda grad, self: grad / (self * self + 1)}, jvp="elementwise")


def _atan2_recip(self: Any, other: Any) -> Any:
    # PyTorch zeroes the gradient at the origin (where the denominator is exactly 0).
    denom = self * self + other * other
    return drop(denom.reciprocal(), denom._data == 0)


defop("atan2", impl=quiet(np.arctan2), inputs=("self", "other"), saves=("other", "self"),
      vjp={"self": lambda grad, self, other, self_shape: unbroadcast(
               grad * other * _atan2_recip(self, other), self_shape),
           "other": lambda grad, self, other, other_shape: unbroadcast(
               grad * -self * _atan2_recip(self, other), other_shape)},
      jvp={"self": lambda t, self, other: t * other * _atan2_recip(self, other),
           "other": lambda t, self, other: t * -self * _atan2_recip(self, other)})

# ---------------------------------------------------------------- hyperbolic
defop("sinh", impl=quiet(np.sinh), saves=("self",),
      vjp={"self": lambda grad, self: grad * self.cosh()}, jvp="elementwise")
defop("cosh", impl=quiet(np.cosh), saves=("self",),
      vjp={"self": lambda grad, self: grad * self.sinh()}, jvp="elementwise")
defop("tanh", impl=np.tanh, saves=("result",),
      vjp={"self": lambda grad, result, ops: ops.call(TANH_BACKWARD, (grad, result))},
      jvp="elementwise")
defop("asinh", impl=np.arcsinh, saves=("self",),
      vjp={"self": lambda grad, self: grad * (self.pow(2) + 1).rsqrt()}, jvp="elementwise")
defop("acosh", impl=quiet(np.arccosh), saves=("self",),
      vjp={"self": lambda grad, self: grad * (self.pow(2) - 1).rsqrt()}, jvp="elementwise")
defop("atanh", impl=quiet(np.arctanh), saves=("self",),
      vjp={"self": lambda grad, self: grad * 1 / (1 - self.pow(2))}, jvp="elementwise")



def _inplace_not_implemented(name: str) -> Any:
    def rule(grad: Any) -> Any:
        raise NotImplementedError(f"the derivative for 'inplace version of {name}' is not "
                                  "implemented.")

    return rule


# PyTorch has no derivative for the in-place inverse hyperbolics: distinct nodes that raise.
for _name, _ufunc in (("asinh", np.arcsinh), ("acosh", np.arccosh), ("atanh", np.arctanh)):
    defop(_name + "_", impl=quiet(_ufunc), node_name=f"{_name.capitalize()}Backward1",
          vjp={"self": _inplace_not_implemented(_name)},
          jvp={"self": _inplace_not_implemented(_name)})

# ---------------------------------------------------------------- nan_to_num
def _nan_to_num_impl(self: Any, nan: float = 0.0, posinf: float | None = None,
                     neginf: float | None = None) -> Any:
    if self.dtype.kind != "f":
        return self.copy()
    return np.nan_to_num(self, copy=True, nan=nan, posinf=posinf, neginf=neginf)


defop("nan_to_num", impl=_nan_to_num_impl, params=("nan", "posinf", "neginf"), saves=("self",),
      vjp={"self": lambda grad, self: grad * const(np.isfinite(self._data))},
      jvp="elementwise")


# ---------------------------------------------------------------- error function
defop("erf", impl=special("erf"), saves=("self",),
      vjp={"self": lambda grad, self: _TWO_OVER_SQRT_PI * (-self.pow(2)).exp() * grad},
      jvp="elementwise")
defop("erfc", impl=special("erfc"), saves=("self",),
      vjp={"self": lambda grad, self: -_TWO_OVER_SQRT_PI * (-self.pow(2)).exp() * grad},
      jvp="elementwise")
