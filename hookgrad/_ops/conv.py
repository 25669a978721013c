"""The convolution primitive (``ConvolutionBackward0``), plain and transposed, 1-d to 3-d.

Layer 3. PyTorch routes ``conv1d``, ``conv2d`` and ``conv_transpose2d`` through one ATen op,
``convolution(input, weight, bias, stride, padding, dilation, transposed, output_padding,
groups)``; so does hookgrad. A missing bias is passed as an empty constant tensor, which gives
the node the same ``(None, 0)`` third edge PyTorch shows.

Derivatives: the input and weight gradients are primitives of their own whose impls are the
array kernels of `_conv_kernels` (one matmul each), and whose rules are the convolution and the
other gradient again, so double backward (and beyond) works (NOTE [Convolution backward
primitives]).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from hookgrad._backend import namespace_of
from hookgrad._ops import _conv_kernels as K
from hookgrad._ops import _convnd_kernels as KN
from hookgrad._ops._rules import const
from hookgrad._ops.registry import defop
from hookgrad._tensor import Tensor

Ints = Sequence[int]


def _spatial(arrs: Sequence[Any], nd: int) -> list[Any]:
    """View 1-d convolution arrays as 2-d ones (an ``H = 1`` axis after the channels)."""
    return [a.reshape(*a.shape[:2], 1, *a.shape[2:]) if nd == 1 else a for a in arrs]


def _p2(stride: Ints, padding: Ints, dilation: Ints, output_padding: Ints) -> list[K.Pair]:
    return K.as_2d((stride, padding, dilation, output_padding), (1, 0, 1, 0))


def _impl(
    input: Any,
    weight: Any,
    bias: Any,
    stride: Ints,
    padding: Ints,
    dilation: Ints,
    transposed: bool,
    output_padding: Ints,
    groups: int,
) -> Any:
    nd = input.ndim - 2
    if nd == 3:  # any-rank kernels (the 2-d ones are the tuned hot path)
        if transposed:
            out = KN.conv_transpose(input, weight, stride, padding, output_padding, dilation, groups)
        else:
            out = KN.conv_forward(input, weight, stride, padding, dilation, groups)
        if bias.size and bias.shape[0] == out.shape[1]:
            out += bias.reshape(-1, 1, 1, 1)
        return out
    x, w = _spatial((input, weight), nd)
    s, p, d, op = _p2(stride, padding, dilation, output_padding)
    if transposed:
        out = K.conv2d_transpose(x, w, s, p, op, d, groups)
    else:
        out = K.conv2d_forward(x, w, s, p, d, groups)
    if bias.size and bias.shape[0] == out.shape[1]:
        out += bias.reshape(-1, 1, 1)
    return out.reshape(out.shape[:2] + out.shape[3:]) if nd == 1 else out


# ---------------------------------------------------------------- raw (array) adjoints
def _raw_input_grad(
    g: Any,
    w: Any,
    in_shape: Ints,
    stride: Ints,
    padding: Ints,
    dilation: Ints,
    transposed: bool,
    groups: int,
) -> Any:
    nd = g.ndim - 2
    if nd == 3:
        if transposed:
            out = KN.conv_forward(g, w, stride, padding, dilation, groups)
            return out[(..., *(slice(0, n) for n in in_shape[2:]))]
        return KN.conv_input_grad(g, w, tuple(in_shape[2:]), stride, padding, dilation, groups)
    g2, w2 = _spatial((g, w), nd)
    s, p, d, _ = _p2(stride, padding, dilation, (0,) * nd)
    if transposed:  # an output padding >= stride adds rows the input never reached: crop
        out = K.conv2d_forward(g2, w2, s, p, d, groups)
        out = out[..., : in_shape[-2] if nd == 2 else 1, : in_shape[-1]]
    else:
        hw = (1, in_shape[2]) if nd == 1 else (in_shape[2], in_shape[3])
        out = K.conv2d_input_grad(g2, w2, hw, s, p, d, groups)
    out = out.reshape(tuple(in_shape))
    # the kernels crop a padded buffer; PyTorch's input gradient is a dense tensor
    return np.ascontiguousarray(out) if type(out) is np.ndarray else out


def _raw_weight_grad(
    x: Any,
    g: Any,
    w_shape: Ints,
    stride: Ints,
    padding: Ints,
    dilation: Ints,
    transposed: bool,
    groups: int,
) -> Any:
    nd = x.ndim - 2
    if transposed:  # the weight gradient of the adjoint: roles of input and grad swap
        x, g = g, x
    if nd == 3:
        return KN.conv_weight_grad(x, g, tuple(w_shape), stride, padding, dilation, groups)
    x2, g2 = _spatial((x, g), nd)
    s, p, d, _ = _p2(stride, padding, dilation, (0,) * nd)
    w2 = (*w_shape[:2], 1, w_shape[2]) if nd == 1 else tuple(w_shape)
    return K.conv2d_weight_grad(x2, g2, w2, s, p, d, groups).reshape(tuple(w_shape))


# ---------------------------------------------------------------- differentiable adjoints
def conv(
    input: Tensor,
    weight: Tensor,
    bias: Tensor | None,
    stride: Ints,
    padding: Ints,
    dilation: Ints,
    transposed: bool,
    output_padding: Ints,
    groups: int,
) -> Tensor:
    """Bind the ``convolution`` primitive (a missing bias becomes an empty constant)."""
    from hookgrad._dispatch import bind

    if bias is None:
        data = input._data
        bias = const(namespace_of(data).zeros((0,), dtype=data.dtype))
    return bind(
        CONVOLUTION,
        (input, weight, bias),
        {
            "stride": tuple(stride),
            "padding": tuple(padding),
            "dilation": tuple(dilation),
            "transposed": transposed,
            "output_padding": tuple(output_padding),
            "groups": groups,
        },
    )


def _with_empty_bias(ops: Any, input: Any, weight: Any, params: dict) -> Any:
    """The ``convolution`` primitive through `ops`, with no bias (an empty constant)."""
    data = ops.data(input)
    bias = ops.const(namespace_of(data).zeros((0,), dtype=data.dtype))
    return ops.call(CONVOLUTION, (input, weight, bias), params)


def _params(stride: Ints, padding: Ints, dilation: Ints, transposed: bool,
            output_padding: Ints, groups: int) -> dict:
    return {"stride": tuple(stride), "padding": tuple(padding), "dilation": tuple(dilation),
            "transposed": transposed, "output_padding": tuple(output_padding), "groups": groups}


# ---------------------------------------------------------------- the gradients as primitives
# NOTE [Convolution backward primitives]
# PyTorch computes both gradients with one op, ``convolution_backward``, whose own node under
# ``create_graph`` is ``ConvolutionBackwardBackward0``. Here each gradient is one primitive with
# that node name, whose impl is the array kernel: a rule is then one ``ops.call`` (NOTE [Rule
# operations]), bit-identical whether the engine hands it arrays or hookgrad ops. The forward
# ``y = B(x, w)`` is bilinear, so the gradients are the adjoints of ``B``:
#   input_grad(g, w) = B(., w)^T g        weight_grad(g, x) = B(x, .)^T g
# and their own gradients are ``B`` and the other adjoint again:
#   d<u, input_grad(g, w)>: wrt g -> B(u, w),  wrt w -> weight_grad(g, u)
#   d<v, weight_grad(g, x)>: wrt g -> B(x, v), wrt x -> input_grad(g, v)
def _input_grad_impl(grad_output: Any, weight: Any, input_size: Ints, stride: Ints,
                     padding: Ints, dilation: Ints, transposed: bool, output_padding: Ints,
                     groups: int) -> Any:
    return _raw_input_grad(grad_output, weight, input_size, stride, padding, dilation,
                           transposed, groups)


def _weight_grad_impl(grad_output: Any, input: Any, weight_size: Ints, stride: Ints,
                      padding: Ints, dilation: Ints, transposed: bool, output_padding: Ints,
                      groups: int) -> Any:
    return _raw_weight_grad(input, grad_output, weight_size, stride, padding, dilation,
                            transposed, groups)


_CONV_PARAMS = ("stride", "padding", "dilation", "transposed", "output_padding", "groups")


def _input_grad_of_grad(grad: Any, weight: Any, stride: Ints, padding: Ints, dilation: Ints,
                        transposed: bool, output_padding: Ints, groups: int, ops: Any) -> Any:
    p = _params(stride, padding, dilation, transposed, output_padding, groups)
    return _with_empty_bias(ops, grad, weight, p)


def _input_grad_of_weight(grad: Any, grad_output: Any, weight_shape: Ints, stride: Ints,
                          padding: Ints, dilation: Ints, transposed: bool, output_padding: Ints,
                          groups: int, ops: Any) -> Any:
    p = _params(stride, padding, dilation, transposed, output_padding, groups)
    params = {"weight_size": tuple(weight_shape), **p}
    return ops.call(CONV_WEIGHT_GRAD, (grad_output, grad), params)


def _weight_grad_of_grad(grad: Any, input: Any, stride: Ints, padding: Ints, dilation: Ints,
                         transposed: bool, output_padding: Ints, groups: int, ops: Any) -> Any:
    p = _params(stride, padding, dilation, transposed, output_padding, groups)
    return _with_empty_bias(ops, input, grad, p)


def _weight_grad_of_input(grad: Any, grad_output: Any, input_shape: Ints, stride: Ints,
                          padding: Ints, dilation: Ints, transposed: bool, output_padding: Ints,
                          groups: int, ops: Any) -> Any:
    p = _params(stride, padding, dilation, transposed, output_padding, groups)
    return ops.call(CONV_INPUT_GRAD, (grad_output, grad), {"input_size": tuple(input_shape), **p})


def _bilinear_jvp(prim_name: str, first: bool) -> Any:
    """JVP of a bilinear gradient primitive in one argument: the primitive on the tangent."""
    def jvp(t: Any, grad_output: Any, other: Any, params: dict) -> Any:
        from hookgrad._dispatch import bind

        args = (t, other) if first else (grad_output, t)
        return bind(_GRAD_PRIMS[prim_name], args, params)

    return jvp


CONV_INPUT_GRAD = defop(
    "convolution_backward_input",
    impl=_input_grad_impl,
    inputs=("grad_output", "weight"),
    params=("input_size", *_CONV_PARAMS),
    saves=("grad_output", "weight"),
    node_name="ConvolutionBackwardBackward0",
    vjp={"grad_output": _input_grad_of_grad, "weight": _input_grad_of_weight},
    jvp={
        "grad_output": lambda t, weight, input_size, stride, padding, dilation, transposed,
        output_padding, groups: _bilinear_jvp("input", True)(t, None, weight, {
            "input_size": input_size,
            **_params(stride, padding, dilation, transposed, output_padding, groups)}),
        "weight": lambda t, grad_output, input_size, stride, padding, dilation, transposed,
        output_padding, groups: _bilinear_jvp("input", False)(t, grad_output, None, {
            "input_size": input_size,
            **_params(stride, padding, dilation, transposed, output_padding, groups)}),
    },
)

CONV_WEIGHT_GRAD = defop(
    "convolution_backward_weight",
    impl=_weight_grad_impl,
    inputs=("grad_output", "input"),
    params=("weight_size", *_CONV_PARAMS),
    saves=("grad_output", "input"),
    node_name="ConvolutionBackwardBackward0",
    vjp={"grad_output": _weight_grad_of_grad, "input": _weight_grad_of_input},
    jvp={
        "grad_output": lambda t, input, weight_size, stride, padding, dilation, transposed,
        output_padding, groups: _bilinear_jvp("weight", True)(t, None, input, {
            "weight_size": weight_size,
            **_params(stride, padding, dilation, transposed, output_padding, groups)}),
        "input": lambda t, grad_output, weight_size, stride, padding, dilation, transposed,
        output_padding, groups: _bilinear_jvp("weight", False)(t, grad_output, None, {
            "weight_size": weight_size,
            **_params(stride, padding, dilation, transposed, output_padding, groups)}),
    },
)
_GRAD_PRIMS = {"input": CONV_INPUT_GRAD, "weight": CONV_WEIGHT_GRAD}


# Both rules name both saved values: PyTorch's ConvolutionBackward0 has one joint formula
# (``convolution_backward``), so it saves input and weight whichever needs a gradient, and
# saved-tensor hooks see both packs (the argument a rule does not use is ignored).
def _input_grad(grad: Any, input: Any, weight: Any, input_shape: Ints, stride: Ints,
                padding: Ints, dilation: Ints, transposed: bool, output_padding: Ints,
                groups: int, ops: Any) -> Any:
    p = _params(stride, padding, dilation, transposed, output_padding, groups)
    return ops.call(CONV_INPUT_GRAD, (grad, weight), {"input_size": tuple(input_shape), **p})


def _weight_grad(grad: Any, input: Any, weight: Any, weight_shape: Ints, stride: Ints,
                 padding: Ints, dilation: Ints, transposed: bool, output_padding: Ints,
                 groups: int, ops: Any) -> Any:
    p = _params(stride, padding, dilation, transposed, output_padding, groups)
    return ops.call(CONV_WEIGHT_GRAD, (grad, input), {"weight_size": tuple(weight_shape), **p})


def _bias_grad(grad: Any, ops: Any) -> Any:
    return ops.sum(grad, (0, *range(2, grad.ndim)))


def _bias_tangent(t: Tensor, result: Tensor) -> Tensor:
    shape = (1, -1) + (1,) * (result._data.ndim - 2)
    return t.reshape(shape).expand(*result._data.shape)  # type: ignore[attr-defined]


CONVOLUTION = defop(
    "convolution",
    impl=_impl,
    inputs=("input", "weight", "bias"),
    params=("stride", "padding", "dilation", "transposed", "output_padding", "groups"),
    saves=("input", "weight"),
    # NOTE [Double-backward reads]: convolution_backward(grad_output, input, weight, ...)
    double_reads=dict.fromkeys(("input", "weight", "bias"), ("input", "weight")),
    vjp={
        "input": _input_grad,
        "weight": _weight_grad,
        "bias": lambda grad, ops: _bias_grad(grad, ops),
    },
    jvp={
        "input": lambda t, weight, stride, padding, dilation, transposed, output_padding, groups: (
            conv(t, weight, None, stride, padding, dilation, transposed, output_padding, groups)
        ),
        "weight": lambda t, input, stride, padding, dilation, transposed, output_padding, groups: (
            conv(input, t, None, stride, padding, dilation, transposed, output_padding, groups)
        ),
        "bias": _bias_tangent,
    },
)

__all__ = ["CONVOLUTION", "CONV_INPUT_GRAD", "CONV_WEIGHT_GRAD", "conv"]
