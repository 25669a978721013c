"""Gradients of convolutions with respect to their input or weight, as standalone functions.

Each runs the convolution forward on a stand-in tensor and asks autograd for the one gradient,
so the result is exactly the backward of ``F.conv<N>d`` (with `create_graph` off).

Mirrors: ``torch.nn.grad``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from hookgrad._functional.creation import zeros
from hookgrad._tensor import Tensor
from hookgrad.autograd._api import grad as _grad
from hookgrad.autograd.grad_mode import enable_grad
from hookgrad.nn import functional as F

__all__ = ["conv1d_input", "conv1d_weight", "conv2d_input", "conv2d_weight", "conv3d_input",
           "conv3d_weight"]


def _input_grad(conv: Callable[..., Tensor], input_size: Any, weight: Tensor,
                grad_output: Tensor, stride: Any, padding: Any, dilation: Any,
                groups: int) -> Tensor:
    with enable_grad():
        x = zeros(*input_size, dtype=grad_output.dtype).requires_grad_()
        out = conv(x, weight.detach(), None, stride, padding, dilation, groups)
        return _grad(out, x, grad_output)[0]


def _weight_grad(conv: Callable[..., Tensor], input: Tensor, weight_size: Any,
                 grad_output: Tensor, stride: Any, padding: Any, dilation: Any,
                 groups: int) -> Tensor:
    with enable_grad():
        w = zeros(*weight_size, dtype=grad_output.dtype).requires_grad_()
        out = conv(input.detach(), w, None, stride, padding, dilation, groups)
        return _grad(out, w, grad_output)[0]


def conv1d_input(input_size: Any, weight: Tensor, grad_output: Tensor, stride: Any = 1,
                 padding: Any = 0, dilation: Any = 1, groups: int = 1) -> Tensor:
    """Gradient of ``conv1d`` w.r.t. an input of `input_size`. Mirrors: ``conv1d_input``."""
    return _input_grad(F.conv1d, input_size, weight, grad_output, stride, padding, dilation,
                       groups)


def conv1d_weight(input: Tensor, weight_size: Any, grad_output: Tensor, stride: Any = 1,
                  padding: Any = 0, dilation: Any = 1, groups: int = 1) -> Tensor:
    """Gradient of ``conv1d`` w.r.t. a weight of `weight_size`. Mirrors: ``conv1d_weight``."""
    return _weight_grad(F.conv1d, input, weight_size, grad_output, stride, padding, dilation,
                        groups)


def conv2d_input(input_size: Any, weight: Tensor, grad_output: Tensor, stride: Any = 1,
                 padding: Any = 0, dilation: Any = 1, groups: int = 1) -> Tensor:
    """Gradient of ``conv2d`` w.r.t. an input of `input_size`. Mirrors: ``conv2d_input``."""
    return _input_grad(F.conv2d, input_size, weight, grad_output, stride, padding, dilation,
                       groups)


def conv2d_weight(input: Tensor, weight_size: Any, grad_output: Tensor, stride: Any = 1,
                  padding: Any = 0, dilation: Any = 1, groups: int = 1) -> Tensor:
    """Gradient of ``conv2d`` w.r.t. a weight of `weight_size`. Mirrors: ``conv2d_weight``."""
    return _weight_grad(F.conv2d, input, weight_size, grad_output, stride, padding, dilation,
                        groups)


def conv3d_input(input_size: Any, weight: Tensor, grad_output: Tensor, stride: Any = 1,
                 padding: Any = 0, dilation: Any = 1, groups: int = 1) -> Tensor:
    """Gradient of ``conv3d`` w.r.t. an input of `input_size`. Mirrors: ``conv3d_input``."""
    return _input_grad(F.conv3d, input_size, weight, grad_output, stride, padding, dilation,
                       groups)


def conv3d_weight(input: Tensor, weight_size: Any, grad_output: Tensor, stride: Any = 1,
                  padding: Any = 0, dilation: Any = 1, groups: int = 1) -> Tensor:
    """Gradient of ``conv3d`` w.r.t. a weight of `weight_size`. Mirrors: ``conv3d_weight``."""
    return _weight_grad(F.conv3d, input, weight_size, grad_output, stride, padding, dilation,
                        groups)
