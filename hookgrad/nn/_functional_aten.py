"""ATen-level ``torch.<op>`` spellings of nn ops that take ATen's arguments: boolean ``train``
dropouts with their in-place forms, ``constant_pad_nd``, ``convolution``, ``conv_tbc`` (also
``F.conv_tbc``), the margin/embedding losses with an integer ``reduction`` (0 none, 1 mean,
2 sum), ``batch_norm_update_stats`` and the SyncBatchNorm kernels that
PyTorch's CPU build lacks (they raise its NotImplementedError).

Mirrors: the ``torch`` functions of the same names.
"""

from __future__ import annotations

import math
from typing import Any

from hookgrad._functional import creation as _creation
from hookgrad._functional import random as _random
from hookgrad._ops.conv import conv as _conv
from hookgrad._tensor import Tensor
from hookgrad._functional.rearrange import pad as _pad
from hookgrad.nn import _functional_extra as _FE
from hookgrad.nn import _functional_loss_extra as _FL

__all__ = ["conv_tbc"]
_REDUCTIONS = ("none", "mean", "sum")


def _check_p(p: float) -> None:
    if p < 0 or p > 1:
        raise RuntimeError(f"dropout probability has to be between 0 and 1, but got {p}")


def _feature_shape(input: Tensor) -> tuple:
    if input.dim() < 2:
        raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")
    return tuple(input.shape[:2]) + (1,) * (input.dim() - 2)


def feature_dropout(input: Tensor, p: float, train: bool) -> Tensor:
    """Zero whole ``(N, C)`` feature maps with probability `p`, scale the rest by
    ``1 / (1 - p)``. Mirrors: ``torch.feature_dropout``."""
    _check_p(p)
    if not train or p == 0:
        return input
    shape = _feature_shape(input)
    if p == 1:
        return input * _creation.zeros(*shape, dtype=input.dtype)
    keep = (_random.rand(*shape, dtype=input.dtype) >= p).to(input.dtype)  # type: ignore
    return input * (keep / (1 - p))


def alpha_dropout(input: Tensor, p: float, train: bool) -> Tensor:
    """Mirrors: ``torch.alpha_dropout``."""
    _check_p(p)
    return _FE.alpha_dropout(input, p, train)


def feature_alpha_dropout(input: Tensor, p: float, train: bool) -> Tensor:
    """Mirrors: ``torch.feature_alpha_dropout``."""
    _check_p(p)
    if train and p > 0:
        _feature_shape(input)
    return _FE.feature_alpha_dropout(input, p, train)


def _inplace(fn: Any, name: str) -> Any:
    def inplace(input: Tensor, p: float, train: bool) -> Tensor:
        out = fn(input, p, train)
        return input if out is input else input.copy_(out)  # type: ignore[attr-defined]

    inplace.__name__ = inplace.__qualname__ = name
    inplace.__doc__ = f"In-place ``{name[:-1]}``. Mirrors: ``torch.{name}``."
    return inplace


feature_dropout_ = _inplace(feature_dropout, "feature_dropout_")
alpha_dropout_ = _inplace(alpha_dropout, "alpha_dropout_")
feature_alpha_dropout_ = _inplace(feature_alpha_dropout, "feature_alpha_dropout_")


def constant_pad_nd(input: Tensor, pad: Any, value: float = 0) -> Tensor:
    """Pad the last ``len(pad) // 2`` dims with `value`. Mirrors: ``torch.constant_pad_nd``."""
    if len(pad) % 2:
        raise RuntimeError(f"Length of pad must be even but instead it equals {len(pad)}")
    return _pad(input, list(pad), "constant", value)


def convolution(input: Tensor, weight: Tensor, bias: Tensor | None, stride: Any, padding: Any,
                dilation: Any, transposed: bool, output_padding: Any, groups: int) -> Tensor:
    """ATen's convolution entry (``ConvolutionBackward0``); a one-element list is used for
    every spatial dimension. Mirrors: ``torch.convolution``."""
    nd = weight.dim() - 2

    def expand(v: Any) -> tuple:
        v = tuple(v) if isinstance(v, (list, tuple)) else (v,)
        return v * nd if len(v) == 1 else v

    return _conv(input, weight, bias, expand(stride), expand(padding), expand(dilation),
                 bool(transposed), expand(output_padding), int(groups))


def conv_tbc(input: Tensor, weight: Tensor, bias: Tensor, pad: int = 0) -> Tensor:
    """1-d convolution over time of ``(time, batch, in)`` input with a ``(kernel, in, out)``
    weight: a permuted ``conv1d`` (the graph shows its nodes rather than ``ConvTbcBackward0``).

    Mirrors: ``torch.conv_tbc`` and ``torch.nn.functional.conv_tbc``.
    """
    if input.dim() != 3:
        raise RuntimeError("Input must have 3 dims: time, batch, in_channel")
    if weight.dim() != 3:
        raise RuntimeError("Weight tensor must have 3 dims: kernel_width, in_channels, "
                           "out_channels.")
    if bias.dim() != 1:
        raise RuntimeError("Bias must be 1-D")
    if input.shape[2] != weight.shape[1]:
        raise RuntimeError("Input dim 2 (input channels) is not == dim 1 in the weight tensor")
    if weight.shape[2] != bias.shape[0]:
        raise RuntimeError("Bias size must equal dim 2 in the weight tensor (output channels).")
    x = input.permute(1, 2, 0)  # type: ignore[attr-defined]
    w = weight.permute(2, 1, 0)  # type: ignore[attr-defined]
    out = _conv(x, w, bias, (1,), (int(pad),), (1,), False, (0,), 1)
    return out.permute(2, 0, 1)  # type: ignore[attr-defined]


def cosine_embedding_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0.0,
                          reduction: int = 1) -> Tensor:
    """Mirrors: ``torch.cosine_embedding_loss``."""
    return _FL.cosine_embedding_loss(input1, input2, target, margin,
                                   reduction=_REDUCTIONS[reduction])


def hinge_embedding_loss(input: Tensor, target: Tensor, margin: float = 1.0,
                         reduction: int = 1) -> Tensor:
    """Mirrors: ``torch.hinge_embedding_loss``."""
    return _FL.hinge_embedding_loss(input, target, margin, reduction=_REDUCTIONS[reduction])


def margin_ranking_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0.0,
                        reduction: int = 1) -> Tensor:
    """Mirrors: ``torch.margin_ranking_loss``."""
    return _FL.margin_ranking_loss(input1, input2, target, margin,
                                 reduction=_REDUCTIONS[reduction])


def triplet_margin_loss(anchor: Tensor, positive: Tensor, negative: Tensor, margin: float = 1.0,
                        p: float = 2, eps: float = 1e-6, swap: bool = False,
                        reduction: int = 1) -> Tensor:
    """Mirrors: ``torch.triplet_margin_loss``."""
    return _FL.triplet_margin_loss(anchor, positive, negative, margin, p, eps, swap,
                                 reduction=_REDUCTIONS[reduction])


def poisson_nll_loss(input: Tensor, target: Tensor, log_input: bool, full: bool, eps: float,
                     reduction: int) -> Tensor:
    """Mirrors: ``torch.poisson_nll_loss`` (every argument required, as in ATen)."""
    return _FL.poisson_nll_loss(input, target, log_input, full, eps=eps,
                              reduction=_REDUCTIONS[reduction])


def rrelu(input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3, training: bool = False,
          generator: Any = None) -> Tensor:
    """Mirrors: ``torch.rrelu``."""
    return _FE.rrelu(input, lower, upper, training)


def rrelu_(input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3,
           training: bool = False, generator: Any = None) -> Tensor:
    """Mirrors: ``torch.rrelu_``."""
    return _FE.rrelu(input, lower, upper, training, inplace=True)


def batch_norm_update_stats(input: Tensor, running_mean: Tensor | None,
                            running_var: Tensor | None, momentum: float) -> tuple:
    """Per-channel mean and biased variance of `input`; the running statistics (when given)
    move towards them by `momentum` (the variance unbiased). Mirrors:
    ``torch.batch_norm_update_stats``."""
    dims = [d for d in range(input.dim()) if d != 1]
    count = math.prod(input.shape[d] for d in dims)
    mean = input.detach().mean(dims)  # type: ignore[attr-defined]
    var = input.detach().var(dims, correction=0)  # type: ignore[attr-defined]
    if running_mean is not None:
        running_mean.mul_(1 - momentum).add_(mean * momentum)  # type: ignore[attr-defined]
    if running_var is not None:
        unbiased = var * (count / max(count - 1, 1))
        running_var.mul_(1 - momentum).add_(unbiased * momentum)  # type: ignore[attr-defined]
    return mean, var


def _cuda_only(name: str) -> Any:
    def fn(*args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(
            f"Could not run 'aten::{name}' with arguments from the 'CPU' backend. This could be "
            "because the operator doesn't exist for this backend (hookgrad, like PyTorch's CPU "
            "build, has only the CUDA SyncBatchNorm kernels' names).")

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"Raises, as on PyTorch's CPU backend. Mirrors: ``torch.{name}``."
    return fn


_SYNC_BN = ["batch_norm_stats", "batch_norm_elemt", "batch_norm_gather_stats",
            "batch_norm_gather_stats_with_counts", "batch_norm_backward_reduce",
            "batch_norm_backward_elemt"]

TORCH_FUNCTIONS = {
    **{fn.__name__: fn for fn in (
        feature_dropout, feature_dropout_, alpha_dropout, alpha_dropout_, feature_alpha_dropout,
        feature_alpha_dropout_, constant_pad_nd, convolution, conv_tbc, cosine_embedding_loss,
        hinge_embedding_loss, margin_ranking_loss, triplet_margin_loss, poisson_nll_loss, rrelu,
        rrelu_, batch_norm_update_stats)},
    "channel_shuffle": _FE.channel_shuffle, "native_channel_shuffle": _FE.native_channel_shuffle,
    "rms_norm": _FE.rms_norm,
    **{name: _cuda_only(name) for name in _SYNC_BN},
}
