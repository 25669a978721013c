"""The ``torch.<op>`` spellings of ``nn.functional`` ops (``torch.conv2d``, ``torch.dropout``...).

Mirrors: PyTorch's namespace functions of the same names. Where ``torch.<op>`` takes the same
arguments as ``F.<op>`` it is the same function; the few with their own argument order or an
integer ``reduction`` (ATen's enum: 0 none, 1 mean, 2 sum) get a wrapper here.
"""

from __future__ import annotations

from typing import Any

from hookgrad.nn import functional as F
from hookgrad._tensor import Tensor

_SAME = ["adaptive_avg_pool1d", "avg_pool1d", "bilinear", "conv1d", "conv2d", "conv3d",
         "conv_transpose1d", "conv_transpose2d", "conv_transpose3d", "max_pool1d",
         "max_pool1d_with_indices", "max_pool2d", "max_pool3d", "prelu", "layer_norm",
         "group_norm", "dropout"]
ALIASES = {name: getattr(F, name) for name in _SAME}
_REDUCTIONS = ("none", "mean", "sum")

__all__ = ["batch_norm", "embedding", "kl_div", "binary_cross_entropy_with_logits",
           "adaptive_max_pool1d", "dropout_"]


def batch_norm(input: Tensor, weight: Any, bias: Any, running_mean: Any, running_var: Any,
               training: bool, momentum: float, eps: float, cudnn_enabled: bool = True) -> Tensor:
    """ATen's argument order (weight and bias before the running stats).

    Mirrors: ``torch.batch_norm``.
    """
    return F.batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps)


def embedding(weight: Tensor, indices: Tensor, padding_idx: int = -1,
              scale_grad_by_freq: bool = False, sparse: bool = False) -> Tensor:
    """ATen's order: the weight first. Mirrors: ``torch.embedding``."""
    return F.embedding(indices, weight, None if padding_idx == -1 else padding_idx,
                       scale_grad_by_freq=scale_grad_by_freq, sparse=sparse)


def kl_div(input: Tensor, target: Tensor, reduction: int = 1, log_target: bool = False) -> Tensor:
    """Integer `reduction` (1 = mean over elements). Mirrors: ``torch.kl_div``."""
    return F.kl_div(input, target, reduction=_REDUCTIONS[reduction], log_target=log_target)


def binary_cross_entropy_with_logits(input: Tensor, target: Tensor, weight: Any = None,
                                     pos_weight: Any = None, reduction: int = 1) -> Tensor:
    """Integer `reduction`. Mirrors: ``torch.binary_cross_entropy_with_logits``."""
    return F.binary_cross_entropy_with_logits(input, target, weight,
                                              reduction=_REDUCTIONS[reduction],
                                              pos_weight=pos_weight)


def adaptive_max_pool1d(input: Tensor, output_size: Any) -> tuple:
    """Returns (values, indices) as ATen does. Mirrors: ``torch.adaptive_max_pool1d``."""
    return F.adaptive_max_pool1d(input, output_size, return_indices=True)


def dropout_(input: Tensor, p: float, train: bool) -> Tensor:
    """In-place dropout. Mirrors: ``torch.dropout_``."""
    return F.dropout(input, p, train, inplace=True)
