"""Backward primitives of activations (PyTorch's ``*_backward`` ops).

An activation's VJP rule calls one of these instead of composing several ops, for two reasons:
- a plain ``backward()`` pays one `bind` per activation instead of three to ten;
- under ``create_graph=True`` the gradient gets PyTorch's node (``ThresholdBackwardBackward0``,
  ``SigmoidBackwardBackward0``...), with the same saved values, and it stays connected to the
  saved input even where its derivative is zero (``relu``'s gradient requires grad in PyTorch, so
  a second ``autograd.grad`` returns zeros instead of raising).
Their own rules give double backward; they are written with Tensor methods and these same
primitives, so any order of derivative works.
"""

from __future__ import annotations

import functools
import math
from typing import Any

import numpy as np

from hookgrad._backend import QUIET_RESET, QUIET_SET, QUIET_STATE
from hookgrad._ops._erf32 import erf_and_square_float32, is_plain_float32
from hookgrad._ops._layout import iterator_layout
from hookgrad._ops._elementwise import const, fast_where, quiet, select_zero, zeros
from hookgrad._ops._rule_ops import TENSOR_OPS
from hookgrad._ops._special import special
from hookgrad._ops.registry import defop

__all__ = [
    "threshold_backward", "leaky_relu_backward", "hardtanh_backward", "hardsigmoid_backward",
    "hardshrink_backward", "softshrink_backward", "sigmoid_backward", "tanh_backward",
    "gelu_backward", "elu_backward", "softplus_backward", "hardswish_backward", "TANH_BACKWARD",
]

_ndarray = np.ndarray


def _grad_layout(impl: Any) -> Any:
    """`impl` with its result in the layout of PyTorch's ``*_backward`` kernels, which iterate
    ``(grad_output, self)``: the gradient's layout decides (NOTE [Elementwise result layout])."""
    @functools.wraps(impl)  # the signature (param defaults) stays visible to `defop`
    def inner(grad_output: Any, other: Any, *args: Any, **kwargs: Any) -> Any:
        return iterator_layout(impl(grad_output, other, *args, **kwargs), (grad_output, other))

    return inner


_SQRT1_2 = math.sqrt(0.5)
_GELU_BETA = math.sqrt(2.0 / math.pi)
_GELU_KAPPA = 0.044715
_PDF_SCALE = 1.0 / math.sqrt(2.0 * math.pi)
_ZERO = {"self": lambda grad: zeros(grad)}  # PyTorch: zeros_like(grad)
_ZERO_JVP = {"self": lambda t: zeros(t)}
_MASKED = dict(inputs=("grad_output", "self"), saves=("self",))


# Each of these is ``grad_output`` times a mask of ``self``: its derivative in ``grad_output`` is
# itself, in ``self`` zero.
def _shrink_zone(self: Any, lambd: float) -> Any:
    return (self >= -lambd) & (self <= lambd)


_TB = defop(
    "threshold_backward",
    # PyTorch's kernel iterates (self, grad): the result takes self's layout
    impl=lambda grad_output, self, threshold: iterator_layout(
        select_zero(grad_output, ~(self <= threshold)), (self, grad_output)),
    params=("threshold",), **_MASKED,
    vjp={"grad_output": lambda grad, self, threshold, ops: threshold_backward(
        grad, self, threshold, ops),
         **_ZERO},
    jvp={"grad_output": lambda t, self, threshold: threshold_backward(t, self, threshold),
         **_ZERO_JVP})
_LRB = defop(
    "leaky_relu_backward",
    impl=lambda grad_output, self, negative_slope, self_is_result=False: iterator_layout(
        fast_where(self > 0, grad_output, grad_output * negative_slope), (self, grad_output)),
    params=("negative_slope", "self_is_result"), **_MASKED,
    vjp={"grad_output": lambda grad, self, negative_slope, ops: leaky_relu_backward(
        grad, self, negative_slope, ops=ops), **_ZERO},
    jvp={"grad_output": lambda t, self, negative_slope: leaky_relu_backward(
        t, self, negative_slope), **_ZERO_JVP})
_HTB = defop(
    "hardtanh_backward",
    impl=_grad_layout(lambda grad_output, self, min_val, max_val: select_zero(
        grad_output, ~((self <= min_val) | (self >= max_val)))),
    params=("min_val", "max_val"), **_MASKED,
    vjp={"grad_output": lambda grad, self, min_val, max_val, ops: hardtanh_backward(
        grad, self, min_val, max_val, ops), **_ZERO},
    jvp={"grad_output": lambda t, self, min_val, max_val: hardtanh_backward(
        t, self, min_val, max_val), **_ZERO_JVP})
_HSB = defop(
    "hardsigmoid_backward",
    impl=_grad_layout(lambda grad_output, self: select_zero(grad_output * (1.0 / 6.0),
                                                            (self > -3) & (self < 3))),
    **_MASKED,
    vjp={"grad_output": lambda grad, self, ops: hardsigmoid_backward(grad, self, ops), **_ZERO},
    jvp={"grad_output": lambda t, self: hardsigmoid_backward(t, self), **_ZERO_JVP})
_HSHB = defop(
    "hardshrink_backward",
    impl=_grad_layout(lambda grad_output, self, lambd: select_zero(
        grad_output, ~_shrink_zone(self, lambd))),
    params=("lambd",), **_MASKED,
    vjp={"grad_output": lambda grad, self, lambd, ops: hardshrink_backward(
        grad, self, lambd, ops=ops),
         **_ZERO},
    jvp={"grad_output": lambda t, self, lambd: hardshrink_backward(t, self, lambd),
         **_ZERO_JVP})
_SSHB = defop(
    "softshrink_backward",
    impl=_grad_layout(lambda grad_output, self, lambd: select_zero(
        grad_output, ~_shrink_zone(self, lambd))),
    params=("lambd",), **_MASKED,
    vjp={"grad_output": lambda grad, self, lambd, ops: softshrink_backward(
        grad, self, lambd, ops=ops),
         **_ZERO},
    jvp={"grad_output": lambda t, self, lambd: softshrink_backward(t, self, lambd),
         **_ZERO_JVP})


def threshold_backward(grad: Any, self: Any, threshold: float, ops: Any = TENSOR_OPS) -> Any:
    """``grad`` where ``self > threshold``, else 0 (``ThresholdBackwardBackward0``)."""
    return ops.call(_TB, (grad, self), {"threshold": threshold})


def leaky_relu_backward(grad: Any, self: Any, negative_slope: float,
                        self_is_result: bool = False, ops: Any = TENSOR_OPS) -> Any:
    """``grad`` where ``self > 0``, else ``grad * negative_slope``."""
    return ops.call(_LRB, (grad, self), {"negative_slope": negative_slope,
                                     "self_is_result": self_is_result})


def hardtanh_backward(grad: Any, self: Any, min_val: float, max_val: float,
                      ops: Any = TENSOR_OPS) -> Any:
    """``grad`` strictly inside ``(min_val, max_val)``, else 0."""
    return ops.call(_HTB, (grad, self), {"min_val": min_val, "max_val": max_val})


def hardsigmoid_backward(grad: Any, self: Any, ops: Any = TENSOR_OPS) -> Any:
    """``grad / 6`` strictly inside ``(-3, 3)``, else 0."""
    return ops.call(_HSB, (grad, self))


def hardshrink_backward(grad: Any, self: Any, lambd: float, ops: Any = TENSOR_OPS) -> Any:
    """``grad`` outside ``[-lambd, lambd]``, else 0."""
    return ops.call(_HSHB, (grad, self), {"lambd": lambd})


def softshrink_backward(grad: Any, self: Any, lambd: float, ops: Any = TENSOR_OPS) -> Any:
    """``grad`` outside ``[-lambd, lambd]``, else 0."""
    return ops.call(_SSHB, (grad, self), {"lambd": lambd})


# ---------------------------------------------------------------- sigmoid / tanh
_SIGMOID_BW = defop(
    "sigmoid_backward",
    impl=_grad_layout(quiet(lambda grad_output, output: grad_output * (1 - output) * output)),
    inputs=("grad_output", "output"), saves=("grad_output", "output"),
    vjp={"grad_output": lambda grad, output, ops: sigmoid_backward(grad, output, ops),
         "output": lambda grad, grad_output, output: grad * grad_output * (-2 * output + 1)},
    jvp={"grad_output": lambda t, output: sigmoid_backward(t, output),
         "output": lambda t, grad_output, output: t * grad_output * (-2 * output + 1)})
def _tanh_backward_impl(grad_output: Any, output: Any) -> Any:
    """``grad_output * (1 - output * output)``; two NumPy arrays of one shape and float dtype
    share one buffer (same operations, same roundings, one allocation instead of three)."""
    token = QUIET_SET(QUIET_STATE)  # inline `quiet` and `_grad_layout`: once per tanh node
    try:
        if (type(output) is _ndarray and type(grad_output) is _ndarray
                and output.dtype == grad_output.dtype and output.shape == grad_output.shape
                and output.ndim and output.dtype.kind == "f"):
            res = np.multiply(output, output)
            np.subtract(1, res, out=res)
            np.multiply(grad_output, res, out=res)
        else:
            res = grad_output * (1 - output * output)
    finally:
        QUIET_RESET(token)
    return iterator_layout(res, (grad_output, output))


_TANH_BW = defop(
    "tanh_backward",
    impl=_tanh_backward_impl,
    inputs=("grad_output", "output"), saves=("grad_output", "output"),
    vjp={"grad_output": lambda grad, output, ops: tanh_backward(grad, output, ops),
         "output": lambda grad, grad_output, output: grad * -2 * output * grad_output},
    jvp={"grad_output": lambda t, output: tanh_backward(t, output),
         "output": lambda t, grad_output, output: t * -2 * output * grad_output})


TANH_BACKWARD = _TANH_BW  # the ``tanh`` rule calls it directly (one frame less per node)


def sigmoid_backward(grad: Any, output: Any, ops: Any = TENSOR_OPS) -> Any:
    """``grad * (1 - y) * y`` for ``y = sigmoid(x)`` (``SigmoidBackwardBackward0``)."""
    return ops.call(_SIGMOID_BW, (grad, output))


def tanh_backward(grad: Any, output: Any, ops: Any = TENSOR_OPS) -> Any:
    """``grad * (1 - y * y)`` for ``y = tanh(x)`` (``TanhBackwardBackward0``)."""
    return ops.call(_TANH_BW, (grad, output))




# ---------------------------------------------------------------- gelu
@quiet
def _gelu_backward_impl(grad_output: Any, self: Any, approximate: str = "none") -> Any:
    x = self
    if approximate == "tanh":
        x_sq = x * x
        tanh_inner = np.tanh(_GELU_BETA * (x + _GELU_KAPPA * x_sq * x))
        left_derivative = 0.5 * (1 + tanh_inner)
        right_derivative = (0.5 * x) * (1 - tanh_inner * tanh_inner) * (
            _GELU_BETA * (1 + 3 * _GELU_KAPPA * x_sq))
        return grad_output * (left_derivative + right_derivative)
    if is_plain_float32(x) and is_plain_float32(grad_output) and grad_output.shape == x.shape:
        return _gelu_backward_float32(grad_output, x)
    cdf = 0.5 * (1 + special("erf")(x * _SQRT1_2))
    pdf = _PDF_SCALE * np.exp(x * x * -0.5)
    return grad_output * (cdf + x * pdf)


def _gelu_backward_float32(grad_output: np.ndarray, x: np.ndarray) -> np.ndarray:
    """The erf GELU's backward in place over two fresh float32 arrays (see `_erf32`)."""
    out, pdf = erf_and_square_float32(x, _SQRT1_2)  # pdf starts as x * x
    np.add(out, 1, out=out)
    np.multiply(out, np.float32(0.5), out=out)  # the normal cdf
    np.multiply(pdf, np.float32(-0.5), out=pdf)
    np.exp(pdf, out=pdf)
    np.multiply(pdf, np.float32(_PDF_SCALE), out=pdf)
    np.multiply(pdf, x, out=pdf)
    np.add(out, pdf, out=out)
    return np.multiply(out, grad_output, out=out)


def _gelu_second(self: Any, approximate: str) -> Any:
    """d/dx of gelu'(x), written with Tensor methods (so it is differentiable again)."""
    if approximate == "tanh":
        x_sq = self * self
        t = ((self + _GELU_KAPPA * (x_sq * self)) * _GELU_BETA).tanh()
        h = _GELU_BETA * (1 + 3 * _GELU_KAPPA * x_sq)
        sech_sq = 1 - t * t
        return sech_sq * h + 0.5 * self * sech_sq * (
            -2 * t * h * h + 6 * _GELU_BETA * _GELU_KAPPA * self)
    pdf = _PDF_SCALE * (self * self * -0.5).exp()
    return pdf * (2 - self * self)


_GELU_BW = defop(
    "gelu_backward", impl=lambda grad_output, self, approximate: iterator_layout(  # (grad, self)
        _gelu_backward_impl(grad_output, self, approximate), (grad_output, self)),
    inputs=("grad_output", "self"),
    params=("approximate",), saves=("grad_output", "self"),
    vjp={"grad_output": lambda grad, self, approximate, ops: gelu_backward(
        grad, self, approximate, ops=ops),
         "self": lambda grad, grad_output, self, approximate: grad * grad_output * _gelu_second(
             self, approximate)},
    jvp={"grad_output": lambda t, self, approximate: gelu_backward(t, self, approximate),
         "self": lambda t, grad_output, self, approximate: t * grad_output * _gelu_second(
             self, approximate)})


def gelu_backward(grad: Any, self: Any, approximate: str, ops: Any = TENSOR_OPS) -> Any:
    """``grad * gelu'(self)`` (``GeluBackwardBackward0``)."""
    return ops.call(_GELU_BW, (grad, self), {"approximate": approximate})


# ---------------------------------------------------------------- elu / softplus / hardswish
_ELU_INPLACE_ERROR = (
    "In-place elu backward calculation is triggered with a negative slope which is not "
    "supported. This is caused by calling in-place forward function with a negative slope, "
    "please call out-of-place version instead."
)


@quiet
def _elu_backward_impl(grad_output: Any, self_or_result: Any, alpha: float, scale: float,
                       input_scale: float, is_result: bool) -> Any:
    x = self_or_result
    negcoef = alpha * scale
    if is_result:  # x is the output: exp(x * input_scale) * negcoef == x + negcoef
        neg = grad_output * input_scale * (x + negcoef)
    else:  # exp of the clamped input: finite where the branch is unused (NOTE [Fast select])
        neg = grad_output * input_scale * negcoef * np.exp(np.minimum(x, 0) * input_scale)
    return fast_where(x <= 0, neg, grad_output * scale)


def _below_zero(x: Any) -> Any:
    """PyTorch's ``(x < 0).type_as(x)``: a constant 0/1 factor (strict, unlike the forward)."""
    return const((x._data < 0).astype(x._data.dtype))


def _elu_double(grad: Any, grad_output: Any, self_or_result: Any, alpha: float, scale: float,
                input_scale: float, is_result: bool) -> Any:
    mask = _below_zero(self_or_result)
    if is_result:
        return grad * grad_output * input_scale * mask
    inner = elu_backward(grad * grad_output * input_scale, self_or_result, alpha, scale,
                         input_scale, is_result)
    return inner * mask


_ELU_PARAMS = ("alpha", "scale", "input_scale", "is_result")
_ELU_BW = defop(
    "elu_backward", impl=_grad_layout(_elu_backward_impl), inputs=("grad_output", "self_or_result"),
    params=_ELU_PARAMS, saves=("grad_output", "self_or_result"),
    vjp={"grad_output": lambda grad, self_or_result, alpha, scale, input_scale, is_result:
         elu_backward(grad, self_or_result, alpha, scale, input_scale, is_result),
         "self_or_result": _elu_double},
    jvp={"grad_output": lambda t, self_or_result, alpha, scale, input_scale, is_result:
         elu_backward(t, self_or_result, alpha, scale, input_scale, is_result),
         "self_or_result": _elu_double})


def elu_backward(grad: Any, self_or_result: Any, alpha: float, scale: float,
                 input_scale: float, is_result: bool, ops: Any = TENSOR_OPS) -> Any:
    """The elu family's gradient from the input, or from the output (``is_result``)."""
    if is_result and alpha < 0:
        raise RuntimeError(_ELU_INPLACE_ERROR)
    params = {"alpha": alpha, "scale": scale, "input_scale": input_scale,
              "is_result": is_result}
    return ops.call(_ELU_BW, (grad, self_or_result), params)


@quiet
def _softplus_backward_impl(grad_output: Any, self: Any, beta: float, threshold: float) -> Any:
    scaled = self * beta
    z = np.exp(np.minimum(scaled, threshold))  # finite where unused (NOTE [Fast select])
    return fast_where(scaled > threshold, grad_output, grad_output * z / (z + 1))


def _softplus_double(grad: Any, grad_output: Any, self: Any, beta: float,
                     threshold: float) -> Any:
    x = self * beta
    below = const((x._data < threshold).astype(x._data.dtype))
    return sigmoid_backward(grad * grad_output, x.sigmoid()) * below * beta


_SOFTPLUS_BW = defop(
    "softplus_backward", impl=_grad_layout(_softplus_backward_impl), inputs=("grad_output", "self"),
    params=("beta", "threshold"), saves=("grad_output", "self"),
    vjp={"grad_output": lambda grad, self, beta, threshold, ops: softplus_backward(
        grad, self, beta, threshold, ops=ops), "self": _softplus_double},
    jvp={"grad_output": lambda t, self, beta, threshold: softplus_backward(
        t, self, beta, threshold), "self": _softplus_double})


def softplus_backward(grad: Any, self: Any, beta: float, threshold: float,
                      ops: Any = TENSOR_OPS) -> Any:
    """``grad * sigmoid(beta * x)`` below the threshold, ``grad`` above it."""
    return ops.call(_SOFTPLUS_BW, (grad, self), {"beta": beta, "threshold": threshold})


@quiet
def _hardswish_backward_impl(grad_output: Any, self: Any) -> Any:
    middle = fast_where(self < 3, grad_output * (self / 3 + 0.5), grad_output)
    return select_zero(middle, ~(self <= -3))


def _hardswish_double(grad: Any, grad_output: Any, self: Any) -> Any:
    inside = (self._data > -3.0) & (self._data < 3.0)
    return (grad * grad_output / 3.0).where(const(inside), 0.0)


_HARDSWISH_BW = defop(
    "hardswish_backward", impl=_grad_layout(_hardswish_backward_impl), inputs=("grad_output", "self"),
    saves=("grad_output", "self"),
    vjp={"grad_output": lambda grad, self, ops: hardswish_backward(grad, self, ops=ops),
         "self": _hardswish_double},
    jvp={"grad_output": lambda t, self: hardswish_backward(t, self), "self": _hardswish_double})


def hardswish_backward(grad: Any, self: Any, ops: Any = TENSOR_OPS) -> Any:
    """0 up to -3, ``grad * (x / 3 + 0.5)`` up to 3 (exclusive), ``grad`` beyond."""
    return ops.call(_HARDSWISH_BW, (grad, self))

