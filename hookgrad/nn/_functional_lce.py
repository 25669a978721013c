"""``linear_cross_entropy`` of `hookgrad.nn.functional`: a linear head followed by cross
entropy.

Mirrors: ``torch.nn.functional.linear_cross_entropy``. hookgrad always takes PyTorch's reference
path (logits materialised); ``options`` selects PyTorch's batch-chunked kernel, which computes
the same loss without materialising the logits, so here it only gets PyTorch's checks and its
warning for configurations the chunked path does not support.
"""

from __future__ import annotations

import math
import warnings
from typing import Any

from hookgrad._tensor import Tensor
from hookgrad.nn._functional_linear import linear
from hookgrad.nn._functional_loss import cross_entropy

__all__ = ["linear_cross_entropy"]


def _check(input: Tensor, linear_weight: Tensor, linear_bias: Tensor | None) -> tuple:
    if input.dim() < 1 or input.dim() > 2:
        raise RuntimeError(f"expected input with dimensionality 1 or 2, got {input.dim()}")
    if linear_weight.dim() < 2:
        raise RuntimeError("expected linear_weight with dimensionality at least 2, got "
                           f"{linear_weight.dim()}")
    in_features = input.shape[-1]
    if in_features != linear_weight.shape[-1]:
        raise RuntimeError("expected equal input and linear_weight last dimensions "
                           f"(in_features), got {input.shape[-1]} and "
                           f"{linear_weight.shape[-1]}, respectively")
    num_classes = linear_weight.shape[0]
    out_features = tuple(linear_weight.shape[1:-1])
    if linear_bias is not None and tuple(linear_bias.shape) != (num_classes, *out_features):
        raise RuntimeError(f"expected linear_bias shape {(num_classes, *out_features)}, got "
                           f"{tuple(linear_bias.shape)}")
    if out_features and input.dim() == 1:
        raise RuntimeError(f"K-dimensional loss defined by linear_weight shape "
                           f"{tuple(linear_weight.shape)} requires batched input, "
                           f"(N, {in_features}), got unbatched input with shape "
                           f"{tuple(input.shape)}")
    return num_classes, out_features


def linear_cross_entropy(input: Tensor, linear_weight: Tensor, target: Tensor, *,
                         linear_bias: Tensor | None = None, weight: Tensor | None = None,
                         reduction: str = "mean", ignore_index: int | None = None,
                         label_smoothing: float = 0.0, options: Any = None) -> Tensor:
    """``cross_entropy(input @ linear_weight^T + linear_bias, target)``; a ``linear_weight`` of
    shape ``(C, *out_features, in)`` gives a K-dimensional loss.

    Mirrors: ``torch.nn.functional.linear_cross_entropy``.
    """
    num_classes, out_features = _check(input, linear_weight, linear_bias)
    logits_shape = (*input.shape[:-1], num_classes, *out_features)
    if tuple(target.shape) == logits_shape and ignore_index is not None:
        raise RuntimeError("ignore_index cannot be specified when target contains "
                           "probabilities")
    chunkable = (not out_features and reduction in {"mean", "sum", "none"}
                 and label_smoothing == 0.0 and str(target.dtype) == "torch.int64")
    if options is not None and not chunkable:
        warnings.warn(
            "linear_cross_entropy: ``options`` ignored; chunked path needs reduction in "
            "{'mean','sum','none'}, label_smoothing == 0, target.dtype == int64, "
            f"out_features == (). Got reduction={reduction!r}, label_smoothing="
            f"{label_smoothing}, target.dtype={target.dtype}, out_features={out_features}, "
            "tracing=False, linear_bias.shape="
            f"{tuple(linear_bias.shape) if linear_bias is not None else None}.", stacklevel=2)
    if out_features:
        flat = math.prod(out_features, start=num_classes)
        linear_weight = linear_weight.reshape(flat, input.shape[-1])  # type: ignore
        if linear_bias is not None:
            linear_bias = linear_bias.reshape(flat)  # type: ignore[attr-defined]
    logits = linear(input, linear_weight, linear_bias).reshape(logits_shape)  # type: ignore
    return cross_entropy(logits, target, weight=weight, reduction=reduction,
                         ignore_index=-100 if ignore_index is None else ignore_index,
                         label_smoothing=label_smoothing)
