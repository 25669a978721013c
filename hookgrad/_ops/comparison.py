"""Comparison, logical and selection primitives (PyTorch docs: "Comparison Ops", ``where``,
``clamp``, ``maximum``, ``masked_fill``).

Comparisons, logical and bitwise ops and the ``is*`` tests return bool or integer tensors and are
not differentiable (no node is ever recorded for them). The selection ops route the gradient with
PyTorch's masks; ties (``maximum`` with equal inputs) split it in half as PyTorch does, and
``clamp`` passes it at the bounds.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from hookgrad._ops._elementwise import drop, fast_where, keep, unbroadcast
from hookgrad._ops.registry import defop

__all__: list[str] = []

_BOOL_OUT = "boolean result: not differentiable"
_INT_OUT = "bitwise op on integer or bool tensors: not differentiable"
_MASK = "boolean mask or condition: not differentiable"

# ---------------------------------------------------------------- comparisons
for _name, _ufunc in (("eq", np.equal), ("ne", np.not_equal), ("lt", np.less),
                      ("le", np.less_equal), ("gt", np.greater), ("ge", np.greater_equal),
                      ("logical_and", np.logical_and), ("logical_or", np.logical_or),
                      ("logical_xor", np.logical_xor)):
    defop(_name, impl=_ufunc, inputs=("self", "other"),
          nondifferentiable={"self": _BOOL_OUT, "other": _BOOL_OUT})

for _name, _ufunc in (("logical_not", np.logical_not), ("isnan", np.isnan),
                      ("isinf", np.isinf), ("isfinite", np.isfinite)):
    defop(_name, impl=_ufunc, nondifferentiable={"self": _BOOL_OUT})

for _name, _ufunc in (("bitwise_and", np.bitwise_and), ("bitwise_or", np.bitwise_or),
                      ("bitwise_xor", np.bitwise_xor)):
    defop(_name, impl=_ufunc, inputs=("self", "other"),
          nondifferentiable={"self": _INT_OUT, "other": _INT_OUT})
defop("bitwise_not", impl=np.invert, nondifferentiable={"self": _INT_OUT})
defop("isclose", impl=lambda self, other, rtol=1e-05, atol=1e-08, equal_nan=False: np.isclose(
          self, other, rtol=rtol, atol=atol, equal_nan=equal_nan),
      inputs=("self", "other"), params=("rtol", "atol", "equal_nan"),
      nondifferentiable={"self": _BOOL_OUT, "other": _BOOL_OUT})

# ---------------------------------------------------------------- where / masked_fill
defop("where", impl=fast_where, inputs=("condition", "self", "other"), saves=("condition",),
      nondifferentiable={"condition": _MASK},
      vjp={"self": lambda grad, condition, self_shape: unbroadcast(
               keep(grad, condition._data), self_shape),
           "other": lambda grad, condition, other_shape: unbroadcast(
               drop(grad, condition._data), other_shape)},
      jvp={"self": lambda t, condition: keep(t, condition._data),
           "other": lambda t, condition: drop(t, condition._data)})


def _masked_fill_impl(self: Any, mask: Any, value: Any) -> Any:
    # The value is cast to the tensor's dtype (PyTorch: 2.5 into an int tensor gives 2).
    fill = value.astype(self.dtype) if hasattr(value, "dtype") else self.dtype.type(value)
    return fast_where(mask, fill, self)


defop("masked_fill", impl=_masked_fill_impl, inputs=("self", "mask"), params=("value",),
      saves=("mask",), nondifferentiable={"mask": _MASK}, node_name="MaskedFillBackward0",
      vjp={"self": lambda grad, mask, self_shape: unbroadcast(
          grad.masked_fill(mask, 0), self_shape)},
      jvp="elementwise")
defop("masked_fill_tensor", impl=_masked_fill_impl, inputs=("self", "mask", "value"),
      saves=("mask",), nondifferentiable={"mask": _MASK}, node_name="MaskedFillBackward1",
      vjp={"self": lambda grad, mask, self_shape: unbroadcast(
               grad.masked_fill(mask, 0), self_shape),
           "value": lambda grad, mask: keep(grad, mask._data).sum()},
      jvp={"self": lambda t, mask: t.masked_fill(mask, 0),
           "value": lambda t, mask: keep(t, mask._data)})


# ---------------------------------------------------------------- clamp
def _clamp_impl(self: Any, min: Any = None, max: Any = None) -> Any:  # noqa: A002
    out = self if min is None else np.maximum(self, min)
    out = out if max is None else np.minimum(out, max)
    return out.copy() if out is self else out


def _clamp_mask(x: Any, min: Any, max: Any) -> Any:  # noqa: A002
    if min is not None and max is not None:
        return (x >= min) & (x <= max)
    return x >= min if min is not None else x <= max


def _clamp_scalar_vjp(grad: Any, self: Any, min: Any, max: Any) -> Any:  # noqa: A002
    if min is None and max is None:
        return grad
    return keep(grad, _clamp_mask(self._data, min, max))


defop("clamp", impl=_clamp_impl, params=("min", "max"), saves=("self",),
      node_name="ClampBackward1", vjp={"self": _clamp_scalar_vjp}, jvp="elementwise")


def _clamp_t_self(grad: Any, self: Any, min: Any, max: Any, self_shape: tuple) -> Any:  # noqa: A002
    return unbroadcast(keep(grad, _clamp_mask(self._data, min._data, max._data)), self_shape)


def _clamp_t_min(grad: Any, self: Any, min: Any, max: Any, min_shape: tuple) -> Any:  # noqa: A002
    s, lo, hi = self._data, min._data, max._data
    return unbroadcast(keep(grad, (s < lo) & (lo < hi)), min_shape)


def _clamp_t_max(grad: Any, self: Any, min: Any, max: Any, max_shape: tuple) -> Any:  # noqa: A002
    s, lo, hi = self._data, min._data, max._data
    return unbroadcast(keep(grad, (s > hi) | (hi < lo)), max_shape)


def _jvp_of(rule: Any) -> Any:
    """The JVP of a clamp rule: the same mask applied to the tangent (no reduction)."""
    def jvp(t: Any, self: Any, min: Any, max: Any) -> Any:  # noqa: A002
        return rule(t, self, min, max, None)

    return jvp


# clamp(Tensor, Tensor?, Tensor?): one node name (ClampBackward0) for the three shapes of call.
defop("clamp_tensor", impl=_clamp_impl, inputs=("self", "min", "max"),
      saves=("max", "min", "self"), node_name="ClampBackward0",
      vjp={"self": _clamp_t_self, "min": _clamp_t_min, "max": _clamp_t_max},
      jvp={"self": _jvp_of(_clamp_t_self), "min": _jvp_of(_clamp_t_min),
           "max": _jvp_of(_clamp_t_max)})


# One-sided clamps with a tensor bound (clamp(x, min=t), clamp_min(x, t), clamp_max(x, t)).
def _lo_self(grad: Any, self: Any, min: Any, self_shape: tuple) -> Any:  # noqa: A002
    return unbroadcast(keep(grad, self._data >= min._data), self_shape)


def _lo_bound(grad: Any, self: Any, min: Any, min_shape: tuple) -> Any:  # noqa: A002
    return unbroadcast(keep(grad, self._data < min._data), min_shape)


def _hi_self(grad: Any, self: Any, max: Any, self_shape: tuple) -> Any:  # noqa: A002
    return unbroadcast(keep(grad, self._data <= max._data), self_shape)


def _hi_bound(grad: Any, self: Any, max: Any, max_shape: tuple) -> Any:  # noqa: A002
    return unbroadcast(keep(grad, self._data > max._data), max_shape)


def _absent(grad: Any) -> None:
    """The rule of an absent bound: never called, its placeholder never requires grad."""
    return None


_LO_VJP = {"self": _lo_self, "min": _lo_bound}
_LO_JVP = {"self": lambda t, self, min: keep(t, self._data >= min._data),  # noqa: A006
           "min": lambda t, self, min: keep(t, self._data < min._data)}  # noqa: A006
_HI_VJP = {"self": _hi_self, "max": _hi_bound}
_HI_JVP = {"self": lambda t, self, max: keep(t, self._data <= max._data),  # noqa: A006
           "max": lambda t, self, max: keep(t, self._data > max._data)}  # noqa: A006

# clamp(x, min=t) / clamp(x, max=t) keep PyTorch's three edges (self, min, max), the absent bound
# being a placeholder input that never requires grad (an edge to nothing, as in PyTorch).
defop("clamp_tensor_min", impl=lambda self, min, max: np.maximum(self, min),  # noqa: A006
      inputs=("self", "min", "max"), saves=("min", "self"), node_name="ClampBackward0",
      vjp={**_LO_VJP, "max": _absent}, jvp=_LO_JVP)
defop("clamp_tensor_max", impl=lambda self, min, max: np.minimum(self, max),  # noqa: A006
      inputs=("self", "min", "max"), saves=("max", "self"), node_name="ClampBackward0",
      vjp={**_HI_VJP, "min": _absent}, jvp=_HI_JVP)
defop("clamp_min", impl=lambda self, min: np.maximum(self, min), params=("min",),  # noqa: A006
      saves=("self",),
      vjp={"self": lambda grad, self, min: keep(grad, self._data >= min)}, jvp="elementwise")
defop("clamp_min_tensor", impl=lambda self, min: np.maximum(self, min),  # noqa: A006
      inputs=("self", "min"), saves=("min", "self"), node_name="ClampMinBackward1",
      vjp=_LO_VJP, jvp=_LO_JVP)
defop("clamp_max", impl=lambda self, max: np.minimum(self, max), params=("max",),  # noqa: A006
      saves=("self",),
      vjp={"self": lambda grad, self, max: keep(grad, self._data <= max)}, jvp="elementwise")
defop("clamp_max_tensor", impl=lambda self, max: np.minimum(self, max),  # noqa: A006
      inputs=("self", "max"), saves=("max", "self"), node_name="ClampMaxBackward1",
      vjp=_HI_VJP, jvp=_HI_JVP)


# ---------------------------------------------------------------- maximum / minimum / fmax / fmin
def _tie_split(grad: Any, self: Any, other: Any, loses: Any, shape: tuple | None) -> Any:
    """PyTorch: ``where(self == other, grad / 2, grad).masked_fill_(loses, 0)``; summed to
    `shape` (None for a JVP, which keeps the broadcast shape)."""
    half = drop(keep(grad / 2, self._data == other._data, grad), loses)
    return half if shape is None else unbroadcast(half, shape)


def _extremum_rules(self_loses: Any, other_loses: Any) -> tuple[dict, dict]:
    vjp = {
        "self": lambda grad, self, other, self_shape: _tie_split(
            grad, self, other, self_loses(self._data, other._data), self_shape),
        "other": lambda grad, self, other, other_shape: _tie_split(
            grad, self, other, other_loses(self._data, other._data), other_shape),
    }
    jvp = {
        "self": lambda t, self, other: _tie_split(
            t, self, other, self_loses(self._data, other._data), None),
        "other": lambda t, self, other: _tie_split(
            t, self, other, other_loses(self._data, other._data), None),
    }
    return vjp, jvp


_MAXIMUM = _extremum_rules(np.less, np.greater)
_MINIMUM = _extremum_rules(np.greater, np.less)
defop("maximum", impl=np.maximum, inputs=("self", "other"), saves=("other", "self"),
      vjp=_MAXIMUM[0], jvp=_MAXIMUM[1])
defop("minimum", impl=np.minimum, inputs=("self", "other"), saves=("other", "self"),
      vjp=_MINIMUM[0], jvp=_MINIMUM[1])


def _fextremum_rules(cmp: Any) -> tuple[dict, dict]:
    """fmax/fmin: the whole gradient goes to `self` where it wins or `other` is nan."""
    def self_wins(s: Any, o: Any) -> Any:
        return cmp(s, o) | np.isnan(o)

    vjp = {
        "self": lambda grad, self, other, self_shape: unbroadcast(
            keep(grad, self_wins(self._data, other._data)), self_shape),
        "other": lambda grad, self, other, other_shape: unbroadcast(
            drop(grad, self_wins(self._data, other._data)), other_shape),
    }
    jvp = {
        "self": lambda t, self, other: keep(t, self_wins(self._data, other._data)),
        "other": lambda t, self, other: drop(t, self_wins(self._data, other._data)),
    }
    return vjp, jvp


_FMAX = _fextremum_rules(np.greater_equal)
_FMIN = _fextremum_rules(np.less_equal)
defop("fmax", impl=np.fmax, inputs=("self", "other"), saves=("other", "self"),
      vjp=_FMAX[0], jvp=_FMAX[1])
defop("fmin", impl=np.fmin, inputs=("self", "other"), saves=("other", "self"),
      vjp=_FMIN[0], jvp=_FMIN[1])
