"""Fold an eval-mode batch norm into the preceding convolution or linear layer.

Mirrors: ``torch.nn.utils.fusion``: with ``s = bn.weight / sqrt(running_var + eps)``, the fused
weight is ``W * s`` (per output channel; per input channel for transposed convolutions) and the
fused bias ``(b - running_mean) * s + bn.bias``.
"""

from __future__ import annotations

import copy
from typing import Any

from hookgrad._functional import creation as C
from hookgrad._functional import pointwise as P
from hookgrad._tensor import Tensor
from hookgrad.nn.parameter import Parameter

__all__ = ["fuse_conv_bn_eval", "fuse_conv_bn_weights", "fuse_linear_bn_eval",
           "fuse_linear_bn_weights"]


def _bn_terms(bn_rm: Tensor, bn_rv: Tensor, bn_eps: float, bn_w: Any, bn_b: Any) -> tuple:
    w = C.ones_like(bn_rm) if bn_w is None else bn_w
    b = C.zeros_like(bn_rm) if bn_b is None else bn_b
    return w * P.rsqrt(bn_rv + bn_eps), b


def fuse_conv_bn_weights(conv_w: Tensor, conv_b: Any, bn_rm: Tensor, bn_rv: Tensor,
                         bn_eps: float, bn_w: Any, bn_b: Any, transpose: bool = False) -> tuple:
    """Fused (weight, bias) Parameters. Mirrors: ``torch.nn.utils.fusion.fuse_conv_bn_weights``."""
    w_dtype = conv_w.dtype
    b_dtype = conv_b.dtype if conv_b is not None else w_dtype
    if conv_b is None:
        conv_b = C.zeros_like(bn_rm)
    scale, shift = _bn_terms(bn_rm, bn_rv, bn_eps, bn_w, bn_b)
    shape = ([1, -1] if transpose else [-1, 1]) + [1] * (conv_w.dim() - 2)
    fused_w = (conv_w * scale.reshape(shape)).to(dtype=w_dtype)
    fused_b = ((conv_b - bn_rm) * scale + shift).to(dtype=b_dtype)
    return Parameter(fused_w, conv_w.requires_grad), Parameter(fused_b, conv_b.requires_grad)


def fuse_conv_bn_eval(conv: Any, bn: Any, transpose: bool = False) -> Any:
    """A copy of `conv` with `bn` folded in. Mirrors: ``torch.nn.utils.fusion.fuse_conv_bn_eval``."""
    if conv.training or bn.training:
        raise AssertionError("Fusion only for eval!")
    if bn.running_mean is None or bn.running_var is None:
        raise AssertionError("bn.running_mean and bn.running_var must not be None")
    fused = copy.deepcopy(conv)
    fused.weight, fused.bias = fuse_conv_bn_weights(
        fused.weight, fused.bias, bn.running_mean, bn.running_var, bn.eps, bn.weight, bn.bias,
        transpose)
    return fused


def fuse_linear_bn_weights(linear_w: Tensor, linear_b: Any, bn_rm: Tensor, bn_rv: Tensor,
                           bn_eps: float, bn_w: Any, bn_b: Any) -> tuple:
    """Mirrors: ``torch.nn.utils.fusion.fuse_linear_bn_weights``."""
    w_dtype = linear_w.dtype
    b_dtype = linear_b.dtype if linear_b is not None else w_dtype
    if linear_b is None:
        linear_b = C.zeros_like(bn_rm)
    scale, shift = _bn_terms(bn_rm, bn_rv, bn_eps, bn_w, bn_b)
    fused_w = (linear_w * scale.unsqueeze(-1)).to(dtype=w_dtype)
    fused_b = ((linear_b - bn_rm) * scale + shift).to(dtype=b_dtype)
    return Parameter(fused_w, linear_w.requires_grad), Parameter(fused_b, linear_b.requires_grad)


def fuse_linear_bn_eval(linear: Any, bn: Any) -> Any:
    """Mirrors: ``torch.nn.utils.fusion.fuse_linear_bn_eval``."""
    if linear.training or bn.training:
        raise AssertionError("Fusion only for eval!")
    if linear.out_features != bn.num_features and bn.num_features != 1:
        raise AssertionError("To fuse, linear.out_features == bn.num_features or "
                             f"bn.num_features == 1, got linear.out_features="
                             f"{linear.out_features} and bn.num_features={bn.num_features}")
    if bn.running_mean is None or bn.running_var is None:
        raise AssertionError("bn.running_mean and bn.running_var must not be None")
    fused = copy.deepcopy(linear)
    fused.weight, fused.bias = fuse_linear_bn_weights(
        fused.weight, fused.bias, bn.running_mean, bn.running_var, bn.eps, bn.weight, bn.bias)
    return fused
