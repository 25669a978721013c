"""Activation primitives (PyTorch docs: "Non-linear activation functions", elementwise ones).

Each has PyTorch's node name and saved values. The gradients at the kinks (relu at 0, hardtanh at
its bounds, elu at 0...) follow PyTorch's ``*_backward`` kernels exactly, since tests compare
them with PyTorch at those points. In-place variants that PyTorch records with a different node
(``leaky_relu_`` -> ``LeakyReluBackward1``, ``elu_`` -> ``EluBackward1``) save the result
instead of the input and are separate primitives here.

Most rules call a backward primitive (`activation_backward`). ``silu`` and ``mish`` are the
exception, as in PyTorch: when the engine hands them hookgrad ops (NOTE [Rule operations]) their
gradient is a composite of differentiable ops (so double backward works, with PyTorch's
``MulBackward0``... nodes); with array operations it is one fused pass on the arrays.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from hookgrad._backend import namespace_of
from hookgrad._ops._erf32 import erf_float32, is_plain_float32
from hookgrad._ops._elementwise import drop, fast_where, quiet, row_major, select_zero
from hookgrad._ops._layout import iterator_layout
from hookgrad._ops._max_zero import max_zero
from hookgrad._ops.activation_backward import (
    elu_backward,
    gelu_backward,
    hardshrink_backward,
    hardsigmoid_backward,
    hardswish_backward,
    hardtanh_backward,
    leaky_relu_backward,
    sigmoid_backward,
    softplus_backward,
    softshrink_backward,
    threshold_backward,
)
from hookgrad._ops.pointwise_math import special
from hookgrad._ops.registry import defop

__all__ = ["SELU_ALPHA", "SELU_SCALE"]

SELU_ALPHA = 1.6732632423543772848170429916717
SELU_SCALE = 1.0507009873554804934193349852946
_SQRT1_2 = math.sqrt(0.5)
_GELU_BETA = math.sqrt(2.0) * (2.0 / math.sqrt(math.pi)) * 0.5  # sqrt(2/pi)
_GELU_KAPPA = 0.044715
_PDF_SCALE = (2.0 / math.sqrt(math.pi)) * _SQRT1_2 * 0.5  # 1/sqrt(2*pi)
_erf = special("erf")

# ---------------------------------------------------------------- relu family
defop("relu", impl=max_zero, saves=("result",),  # NOTE [Maximum against a scalar]
      vjp={"self": lambda grad, result, ops: threshold_backward(grad, result, 0, ops)},
      jvp="elementwise")

def _leaky_relu_impl(self: Any, negative_slope: float = 0.01) -> Any:
    # ``x if x > 0 else x * slope`` as ATen's kernel, signed zeros included (0 * -0.1 is -0.0,
    # which a sum of the positive and negative parts would turn into +0.0)
    out = namespace_of(self).asarray(np.multiply(self, negative_slope, casting="unsafe",
                                                 dtype=self.dtype))
    np.copyto(out, self, where=self > 0)
    return out


defop("leaky_relu", impl=quiet(_leaky_relu_impl),
      params=("negative_slope",), saves=("self",),
      vjp={"self": lambda grad, self, negative_slope, ops: leaky_relu_backward(
          grad, self, negative_slope, ops=ops)},
      jvp="elementwise")


# ``F.rrelu`` in eval mode is ATen's ``rrelu_with_noise`` with an unused noise buffer: a leaky
# ReLU by the mean slope, recorded as RreluWithNoiseBackward0, which saves the noise and the input
defop("rrelu_with_noise_eval", impl=quiet(lambda self, noise, negative_slope: _leaky_relu_impl(
          self, negative_slope)),
      inputs=("self", "noise"), params=("negative_slope",), saves=("noise", "self"),
      node_name="RreluWithNoiseBackward0",
      nondifferentiable={"noise": "the noise buffer of rrelu is not differentiable"},
      vjp={"self": lambda grad, self, noise, negative_slope, ops: leaky_relu_backward(
          grad, self, negative_slope, ops=ops)},
      jvp={"self": lambda t, self, negative_slope: t * ((self > 0) + (self <= 0) * negative_slope)})


def _leaky_relu_result_vjp(grad: Any, result: Any, negative_slope: float, ops: Any) -> Any:
    if negative_slope < 0:  # the result's sign no longer tells which branch was taken
        raise RuntimeError(_LEAKY_INPLACE_ERROR)
    return leaky_relu_backward(grad, result, negative_slope, True, ops)


_LEAKY_INPLACE_ERROR = (
    "In-place leakyReLu backward calculation is triggered with a negative slope which is not "
    "supported. This is caused by calling in-place forward function with a negative slope, "
    "please call out-of-place version instead. File an issue at "
    "https://github.com/pytorch/pytorch if you do require supporting in-place leakRelu backward "
    "calculation with negative slope"
)
defop("leaky_relu_", impl=quiet(_leaky_relu_impl),
      params=("negative_slope",), saves=("result",), node_name="LeakyReluBackward1",
      vjp={"self": _leaky_relu_result_vjp}, jvp="elementwise")

defop("threshold", impl=lambda self, threshold, value: fast_where(
          self <= threshold, self.dtype.type(value), self),
      params=("threshold", "value"), saves=("self",),
      vjp={"self": lambda grad, self, threshold, ops: threshold_backward(
          grad, self, threshold, ops)},
      jvp="elementwise")
defop("threshold_", impl=lambda self, threshold, value: fast_where(
          self <= threshold, self.dtype.type(value), self),
      params=("threshold", "value"), saves=("self",), node_name="ThresholdBackward1",
      vjp={"self": lambda grad, self, threshold, ops: threshold_backward(
          grad, self, threshold, ops)},
      jvp="elementwise")


# ---------------------------------------------------------------- elu family
@quiet
def _elu_impl(self: Any, alpha: float = 1.0, scale: float = 1.0,
              input_scale: float = 1.0) -> Any:
    # One of the two terms is exactly 0 (NOTE [Fast select] of `_elementwise`).
    return np.maximum(self, 0) * scale + np.expm1(np.minimum(self, 0) * input_scale) * (
        alpha * scale)


_ELU_PARAMS = ("alpha", "scale", "input_scale")
defop("elu", impl=_elu_impl, params=_ELU_PARAMS, saves=("self",),
      vjp={"self": lambda grad, self, alpha, scale, input_scale, ops: elu_backward(
          grad, self, alpha, scale, input_scale, False, ops=ops)},
      jvp="elementwise")
defop("elu_", impl=_elu_impl, params=_ELU_PARAMS, saves=("result",), node_name="EluBackward1",
      vjp={"self": lambda grad, result, alpha, scale, input_scale, ops: elu_backward(
          grad, result, alpha, scale, input_scale, True, ops=ops)},
      jvp="elementwise")


def _celu_impl(self: Any, alpha: float = 1.0) -> Any:
    return _elu_impl(self, alpha, 1.0, 1.0 / alpha)


defop("celu", impl=_celu_impl, params=("alpha",), saves=("self",),
      vjp={"self": lambda grad, self, alpha, ops: elu_backward(grad, self, alpha, 1.0, 1.0 / alpha,
                                                          False, ops=ops)},
      jvp="elementwise")
defop("celu_", impl=_celu_impl, params=("alpha",), saves=("result",), node_name="CeluBackward1",
      vjp={"self": lambda grad, result, alpha, ops: elu_backward(grad, result, alpha, 1.0,
                                                            1.0 / alpha, True, ops=ops)},
      jvp="elementwise")


# ---------------------------------------------------------------- smooth activations
@quiet
def _gelu_impl(self: Any, approximate: str = "none") -> Any:
    if approximate == "tanh":
        inner = _GELU_BETA * (self + _GELU_KAPPA * (self * self * self))
        return 0.5 * self * (1 + np.tanh(inner))
    if is_plain_float32(self):  # in place over one fresh array (see _erf32)
        out = erf_float32(self, _SQRT1_2)
        np.add(out, 1, out=out)
        np.multiply(out, self, out=out)
        np.multiply(out, np.float32(0.5), out=out)
        if self.size > 1 and self.flags.c_contiguous and np.fmax.reduce(out, axis=None) == np.inf:
            # ATen's vectorised float32 kernel (contiguous inputs of two elements or more)
            # gives NaN for +inf, its scalar loop inf
            out[np.isposinf(self)] = np.nan
        return out
    # (scipy's erf widens float16 to float64: the result keeps the input's dtype)
    return (self * 0.5 * (1 + _erf(self * _SQRT1_2))).astype(self.dtype, copy=False)


defop("gelu", impl=_gelu_impl, params=("approximate",), saves=("self",),
      vjp={"self": lambda grad, self, approximate, ops: gelu_backward(
          grad, self, approximate, ops=ops)},
      jvp="elementwise")

@quiet
def _raw_sigmoid(x: Any) -> Any:
    return 1 / (1 + np.exp(-x))


def _silu_vjp(grad: Any, self: Any, ops: Any) -> Any:
    if not ops.graph:  # arrays (NOTE [Rule operations]): one fused pass (see module docstring)
        x = self
        xp = namespace_of(x)
        s = xp.asarray(_raw_sigmoid(x))
        t = xp.asarray(np.subtract(1, s))
        np.multiply(t, x, out=t)
        np.add(t, 1, out=t)
        np.multiply(t, s, out=t)
        # PyTorch's silu_backward iterates (grad, self): grad's layout
        return iterator_layout(np.multiply(t, grad, out=t), (grad, x))
    sigmoid = self.sigmoid()
    return grad * sigmoid * (1.0 + self * (1.0 - sigmoid))


defop("silu", impl=quiet(lambda self: self / (1 + np.exp(-self))), saves=("self",),
      vjp={"self": _silu_vjp}, jvp="elementwise")


@quiet
def _raw_mish_grad(g: Any, x: Any) -> Any:
    tanh_softplus = np.tanh(np.log1p(np.exp(x)))
    return g * (tanh_softplus + x * _raw_sigmoid(x) * (1 - tanh_softplus * tanh_softplus))


def _mish_vjp(grad: Any, self: Any, ops: Any) -> Any:
    if not ops.graph:  # arrays (NOTE [Rule operations]): one fused pass
        return _raw_mish_grad(grad, self)
    sigmoid = self.sigmoid()
    tanh_softplus = self.exp().log1p().tanh()
    return grad * (tanh_softplus + self * sigmoid * (1 - tanh_softplus * tanh_softplus))


defop("mish", impl=quiet(lambda self: self * np.tanh(np.log1p(np.exp(self)))), saves=("self",),
      vjp={"self": _mish_vjp}, jvp="elementwise")


@quiet
def _softplus_impl(self: Any, beta: float = 1.0, threshold: float = 20.0) -> Any:
    scaled = self * beta
    soft = np.log1p(np.exp(np.minimum(scaled, threshold))) / beta  # finite where unused
    return fast_where(scaled > threshold, self, soft)


defop("softplus", impl=_softplus_impl, params=("beta", "threshold"), saves=("self",),
      vjp={"self": lambda grad, self, beta, threshold, ops: softplus_backward(
          grad, self, beta, threshold, ops=ops)},
      jvp="elementwise")

defop("sigmoid", impl=quiet(lambda self: 1 / (1 + np.exp(-self))), saves=("result",),
      vjp={"self": lambda grad, result, ops: sigmoid_backward(grad, result, ops)},
      jvp="elementwise")


@quiet
def _log_sigmoid_impl(self: Any) -> Any:
    # PyTorch's stable form: min(x, 0) - log1p(exp(-|x|)); its forward allocates the result
    # (and its buffer) row-major whatever the input's layout
    return row_major(np.minimum(self, 0) - np.log1p(np.exp(-np.abs(self))))


def _log_sigmoid_vjp(grad: Any, self: Any) -> Any:
    """``grad * sigmoid(-x)``: smooth everywhere, so double backward is right at 0 too."""
    return grad * (-self).sigmoid()


# PyTorch's forward also returns a buffer it saves for backward; here the rule recomputes it
# from the input, so saved-tensor hooks see one pack (the input) where PyTorch shows two.
defop("log_sigmoid", impl=_log_sigmoid_impl, saves=("self",), node_name="LogSigmoidBackward0",
      vjp={"self": _log_sigmoid_vjp}, jvp="elementwise")


@quiet
def _logit_impl(self: Any, eps: float | None = None) -> Any:
    x = self if eps is None else np.clip(self, eps, 1 - eps)
    return np.log(x / (1 - x))


def _logit_vjp(grad: Any, self: Any, eps: float | None) -> Any:
    g = grad / (self * (1 - self))
    x = self._data
    if eps is None:
        return drop(g, (x < 0) | (x > 1), math.nan)
    return drop(g, (x < eps) | (x > 1 - eps))


defop("logit", impl=_logit_impl, params=("eps",), saves=("self",), vjp={"self": _logit_vjp},
      jvp="elementwise")

# ---------------------------------------------------------------- piecewise-linear
defop("hardtanh", impl=lambda self, min_val=-1.0, max_val=1.0: np.minimum(
          np.maximum(self, self.dtype.type(min_val)), self.dtype.type(max_val)),
      params=("min_val", "max_val"), saves=("self",),
      vjp={"self": lambda grad, self, min_val, max_val, ops: hardtanh_backward(
          grad, self, min_val, max_val, ops)},
      jvp="elementwise")

defop("hardsigmoid", impl=lambda self: np.minimum(np.maximum(self + 3, 0), 6) / 6,
      saves=("self",),
      vjp={"self": lambda grad, self, ops: hardsigmoid_backward(grad, self, ops)},
      jvp="elementwise")


defop("hardswish", impl=quiet(lambda self: self * np.minimum(np.maximum(self + 3, 0), 6) / 6),
      saves=("self",),
      vjp={"self": lambda grad, self, ops: hardswish_backward(grad, self, ops=ops)},
      jvp="elementwise")


def _shrink_zone(x: Any, lambd: float) -> Any:
    return (x >= -lambd) & (x <= lambd)


defop("hardshrink", impl=lambda self, lambd=0.5: select_zero(self, ~_shrink_zone(self, lambd)),
      params=("lambd",), saves=("self",),
      vjp={"self": lambda grad, self, lambd, ops: hardshrink_backward(grad, self, lambd, ops=ops)},
      jvp="elementwise")
defop("softshrink", impl=lambda self, lambd=0.5: self - np.clip(self, -lambd, lambd),
      params=("lambd",), saves=("self",),
      vjp={"self": lambda grad, self, lambd, ops: softshrink_backward(grad, self, lambd, ops=ops)},
      jvp="elementwise")
