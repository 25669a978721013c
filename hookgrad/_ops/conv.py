"""The convolution primitive (``ConvolutionBackward0``), plain and transposed, 1-d to 3-d.

Layer 3. PyTorch routes ``conv1d``, ``conv2d`` and ``conv_transpose2d`` through one ATen op,
``convolution(input, weight, bias, stride, padding, dilation, transposed, output_padding,
groups)``; so does hookgrad. A missing bias is passed as an empty constant tensor, which gives
the node the same ``(None, 0)`` third edge PyTorch shows.

Derivatives follow NOTE [Raw backward]: a plain ``backward()`` runs the array kernels of
`_conv_kernels` (one matmul each); under ``create_graph`` the rules are written with the
``convolution`` primitive itself, so double backward (and beyond) works:
- grad wrt input of a convolution is a transposed convolution of ``grad`` by ``weight``
  (and the other way round for a transposed convolution);
- grad wrt weight is a convolution of the input by ``grad`` with batch and channels swapped
  (stride and dilation trade places), cropped to the kernel size.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from hookgrad._backend import namespace_of
from hookgrad._ops import _conv_kernels as K
from hookgrad._ops import _convnd_kernels as KN
from hookgrad._ops._rules import const, raw_backward
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
    return out.reshape(tuple(in_shape))


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


def _output_padding(
    in_shape: Ints, out_shape: Ints, k: Ints, stride: Ints, padding: Ints, dilation: Ints
) -> tuple[int, ...]:
    """The output padding that makes a transposed convolution produce exactly `in_shape`."""
    return tuple(
        in_shape[2 + i]
        - K.transposed_size(out_shape[2 + i], k[i], stride[i], padding[i], dilation[i], 0)
        for i in range(len(stride))
    )


def _crop(out: Tensor, shape: Ints) -> Tensor:
    """`out` narrowed to `shape` in the spatial dims where it is larger (``narrow`` nodes)."""
    for i in range(2, len(shape)):
        if out._data.shape[i] > shape[i]:
            out = out.narrow(i, 0, shape[i])  # type: ignore[attr-defined]
    return out


def _input_grad(
    grad: Tensor,
    weight: Tensor,
    input_shape: Ints,
    stride: Ints,
    padding: Ints,
    dilation: Ints,
    transposed: bool,
    groups: int,
) -> Tensor:
    if raw_backward():
        return const(
            _raw_input_grad(
                grad._data, weight._data, input_shape, stride, padding, dilation, transposed, groups
            )
        )
    nd = len(stride)
    if transposed:
        out = conv(grad, weight, None, stride, padding, dilation, False, (0,) * nd, groups)
        return _crop(out, input_shape)  # see _raw_input_grad
    op = _output_padding(
        input_shape, grad._data.shape, weight._data.shape[2:], stride, padding, dilation
    )
    return conv(grad, weight, None, stride, padding, dilation, True, op, groups)


def _weight_grad_graph(
    x: Tensor, g: Tensor, w_shape: Ints, stride: Ints, padding: Ints, dilation: Ints, groups: int
) -> Tensor:
    """Weight gradient of a plain convolution as a convolution (see the module docstring)."""
    nd = len(stride)
    n, c = x._data.shape[:2]
    o = g._data.shape[1]
    cg, og = c // groups, o // groups
    rest = tuple(range(3, 3 + nd))
    x2 = x.reshape(n, groups, cg, *x.shape[2:]).permute(2, 1, 0, *rest)  # type: ignore
    x2 = x2.reshape(cg, groups * n, *x.shape[2:])
    g2 = g.reshape(n, groups, og, *g.shape[2:]).permute(1, 2, 0, *rest)  # type: ignore
    g2 = g2.reshape(groups * og, n, *g.shape[2:])
    out = conv(x2, g2, None, dilation, padding, stride, False, (0,) * nd, groups)
    return _crop(out, w_shape).transpose(0, 1)  # type: ignore[attr-defined]


def _weight_grad(
    grad: Tensor,
    input: Tensor,
    weight_shape: Ints,
    stride: Ints,
    padding: Ints,
    dilation: Ints,
    transposed: bool,
    groups: int,
) -> Tensor:
    if raw_backward():
        return const(
            _raw_weight_grad(
                input._data, grad._data, weight_shape, stride, padding, dilation, transposed, groups
            )
        )
    if transposed:
        return _weight_grad_graph(grad, input, weight_shape, stride, padding, dilation, groups)
    return _weight_grad_graph(input, grad, weight_shape, stride, padding, dilation, groups)


def _bias_grad(grad: Tensor) -> Tensor:
    dims = (0, *range(2, grad._data.ndim))
    if raw_backward():
        return const(grad._data.sum(axis=dims))
    return grad.sum(dims)  # type: ignore[attr-defined]


def _bias_tangent(t: Tensor, result: Tensor) -> Tensor:
    shape = (1, -1) + (1,) * (result._data.ndim - 2)
    return t.reshape(shape).expand(*result._data.shape)  # type: ignore[attr-defined]


CONVOLUTION = defop(
    "convolution",
    impl=_impl,
    inputs=("input", "weight", "bias"),
    params=("stride", "padding", "dilation", "transposed", "output_padding", "groups"),
    saves=("input", "weight"),
    vjp={
        "input": _input_grad,
        "weight": _weight_grad,
        "bias": lambda grad: _bias_grad(grad),
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

__all__ = ["CONVOLUTION", "conv"]
