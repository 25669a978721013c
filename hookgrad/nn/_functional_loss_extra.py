"""The margin, embedding and likelihood losses of ``nn.functional`` added by the census.

Mirrors: ``torch.nn.functional.margin_ranking_loss``, ``hinge_embedding_loss``,
``cosine_embedding_loss``, ``soft_margin_loss``, ``multilabel_soft_margin_loss``,
``multi_margin_loss``, ``multilabel_margin_loss``, ``triplet_margin_loss``,
``triplet_margin_with_distance_loss``, ``poisson_nll_loss``, ``gaussian_nll_loss``. Composites of
hookgrad ops, formulas as PyTorch's (ATen) write them.
"""

from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np

from hookgrad._ops._checks import tensor_arguments
from hookgrad._functional import creation as C
from hookgrad._functional import pointwise as P
from hookgrad._tensor import Tensor
from hookgrad.nn._functional_layers import pairwise_distance
from hookgrad.nn._functional_loss import legacy_get_string

__all__ = ["margin_ranking_loss", "hinge_embedding_loss", "cosine_embedding_loss",
           "soft_margin_loss", "multilabel_soft_margin_loss", "multi_margin_loss",
           "multilabel_margin_loss", "triplet_margin_loss", "triplet_margin_with_distance_loss",
           "poisson_nll_loss", "gaussian_nll_loss"]


def _reduction(size_average: Any, reduce: Any, reduction: str) -> str:
    if size_average is not None or reduce is not None:
        return legacy_get_string(size_average, reduce)
    return reduction


def _reduce(loss: Tensor, reduction: str) -> Tensor:
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    if reduction == "none":
        return loss
    raise ValueError(f"{reduction} is not a valid value for reduction")


def margin_ranking_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0.0,
                        size_average: Any = None, reduce: Any = None,
                        reduction: str = "mean") -> Tensor:
    """max(0, -target * (input1 - input2) + margin). Mirrors: ``torch.nn.functional.margin_ranking_loss``."""
    if input1.dim() != input2.dim() or input1.dim() != target.dim():
        raise RuntimeError(f"margin_ranking_loss : All input tensors should have same dimension "
                           f"but got sizes: input1: {input1.shape}, input2: {input2.shape}, "
                           f"target: {target.shape} ")
    loss = P.clamp_min(-target * (input1 - input2) + margin, 0)
    return _reduce(loss, _reduction(size_average, reduce, reduction))


def hinge_embedding_loss(input: Tensor, target: Tensor, margin: float = 1.0,
                         size_average: Any = None, reduce: Any = None,
                         reduction: str = "mean") -> Tensor:
    """x where target is 1, max(0, margin - x) where it is -1. Mirrors: ``torch.nn.functional.hinge_embedding_loss``."""
    zeros = C.zeros_like(input)
    margin_clamp = P.where(target != 1, P.clamp_min(margin - input, 0), zeros)
    output_margin = P.where(target != -1, input, zeros)
    return _reduce(output_margin + margin_clamp, _reduction(size_average, reduce, reduction))


def cosine_embedding_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0.0,
                          size_average: Any = None, reduce: Any = None,
                          reduction: str = "mean") -> Tensor:
    """1 - cos for target 1, max(0, cos - margin) for -1. Mirrors: ``torch.nn.functional.cosine_embedding_loss``."""
    eps = 1e-12
    prod = (input1 * input2).sum(-1)
    mag1 = (input1 * input1).sum(-1) + eps
    mag2 = (input2 * input2).sum(-1) + eps
    cos = prod / P.sqrt(mag1 * mag2)
    zeros = C.zeros_like(cos)
    pos = 1 - cos
    neg = P.clamp_min(cos - margin, 0)
    out = P.where(target == 1, pos, zeros) + P.where(target == -1, neg, zeros)
    return _reduce(out, _reduction(size_average, reduce, reduction))


def soft_margin_loss(input: Tensor, target: Tensor, size_average: Any = None, reduce: Any = None,
                     reduction: str = "mean") -> Tensor:
    """log(1 + exp(-target * input)). Mirrors: ``torch.nn.functional.soft_margin_loss``."""
    loss = P.log1p((-target * input).exp())
    return _reduce(loss, _reduction(size_average, reduce, reduction))


def multilabel_soft_margin_loss(input: Tensor, target: Tensor, weight: Any = None,
                                size_average: Any = None, reduce: Any = None,
                                reduction: str = "mean") -> Tensor:
    """Per-class logistic loss averaged over classes. Mirrors: ``torch.nn.functional.multilabel_soft_margin_loss``."""
    loss = -(target * P.logsigmoid(input) + (1 - target) * P.logsigmoid(-input))
    if weight is not None:
        loss = loss * weight
    loss = loss.sum(dim=input.dim() - 1) / input.shape[-1]
    return _reduce(loss, _reduction(size_average, reduce, reduction))


@tensor_arguments
def multi_margin_loss(input: Tensor, target: Tensor, p: int = 1, margin: float = 1.0,
                      weight: Any = None, size_average: Any = None, reduce: Any = None,
                      reduction: str = "mean") -> Tensor:
    """Multi-class hinge loss. Mirrors: ``torch.nn.functional.multi_margin_loss``."""
    if p not in (1, 2):
        raise ValueError("only p == 1 and p == 2 supported")
    x = input if input.dim() == 2 else input.reshape(1, -1)
    t = target.reshape(-1, 1)
    correct = x.gather(1, t)
    z = P.clamp_min(margin - correct + x, 0)
    if p == 2:
        z = z * z
    if weight is not None:
        z = z * weight[t]
    not_target = C.from_numpy(np.arange(x.shape[1])[None, :] != t._data)
    z = P.where(not_target, z, C.zeros_like(z))
    loss = z.sum(1) / x.shape[1]
    loss = loss if input.dim() == 2 else loss.reshape(())
    return _reduce(loss, _reduction(size_average, reduce, reduction))


def multilabel_margin_loss(input: Tensor, target: Tensor, size_average: Any = None,
                           reduce: Any = None, reduction: str = "mean") -> Tensor:
    """Hinge loss between each target class and each non-target class.

    Mirrors: ``torch.nn.functional.multilabel_margin_loss``.
    """
    x = input if input.dim() == 2 else input.reshape(1, -1)
    tgt = target._data.reshape(x.shape)
    n, c = x.shape
    is_target = np.zeros((n, c), dtype=bool)
    pairs = []
    for i in range(n):
        for j in tgt[i]:
            if j < 0:
                break
            is_target[i, j] = True
            pairs.append((i, int(j)))
    total = C.zeros(n, dtype=input.dtype)
    if pairs:
        rows = np.array([p[0] for p in pairs])
        cols = np.array([p[1] for p in pairs])
        correct = x[C.from_numpy(rows), C.from_numpy(cols)].unsqueeze(1)     # (k, 1)
        z = P.clamp_min(1 - correct + x[C.from_numpy(rows)], 0)             # (k, c)
        z = P.where(C.from_numpy(~is_target[rows]), z, C.zeros_like(z))
        total = total.index_add(0, C.from_numpy(rows.astype(np.int64)), z.sum(1))
    loss = total / c
    loss = loss if input.dim() == 2 else loss.reshape(())
    return _reduce(loss, _reduction(size_average, reduce, reduction))


def triplet_margin_loss(anchor: Tensor, positive: Tensor, negative: Tensor, margin: float = 1.0,
                        p: float = 2, eps: float = 1e-6, swap: bool = False,
                        size_average: Any = None, reduce: Any = None,
                        reduction: str = "mean") -> Tensor:
    """max(d(a, p) - d(a, n) + margin, 0). Mirrors: ``torch.nn.functional.triplet_margin_loss``."""
    d_pos = pairwise_distance(anchor, positive, p, eps)
    d_neg = pairwise_distance(anchor, negative, p, eps)
    if swap:
        d_neg = P.minimum(d_neg, pairwise_distance(positive, negative, p, eps))
    loss = P.clamp_min(margin + d_pos - d_neg, 0)
    return _reduce(loss, _reduction(size_average, reduce, reduction))


def triplet_margin_with_distance_loss(anchor: Tensor, positive: Tensor, negative: Tensor, *,
                                      distance_function: Callable | None = None,
                                      margin: float = 1.0, swap: bool = False,
                                      reduction: str = "mean") -> Tensor:
    """Triplet loss with a custom distance. Mirrors: ``torch.nn.functional.triplet_margin_with_distance_loss``."""
    if margin <= 0:
        raise ValueError(f"triplet_margin_with_distance_loss: expected margin to be greater "
                         f"than 0, got {margin} instead")
    dist = distance_function if distance_function is not None else pairwise_distance
    d_pos, d_neg = dist(anchor, positive), dist(anchor, negative)
    if swap:
        d_neg = P.minimum(d_neg, dist(positive, negative))
    return _reduce(P.clamp_min(margin + d_pos - d_neg, 0), reduction)


def poisson_nll_loss(input: Tensor, target: Tensor, log_input: bool = True, full: bool = False,
                     size_average: Any = None, eps: float = 1e-8, reduce: Any = None,
                     reduction: str = "mean") -> Tensor:
    """Poisson negative log likelihood. Mirrors: ``torch.nn.functional.poisson_nll_loss``."""
    if log_input:
        loss = input.exp() - target * input
    else:
        loss = input - target * P.log(input + eps)
    if full:
        safe = P.where(target > 1, target, C.ones_like(target))
        stirling = safe * P.log(safe) - safe + 0.5 * P.log(2 * math.pi * safe)
        loss = loss + P.where(target > 1, stirling, C.zeros_like(stirling))
    return _reduce(loss, _reduction(size_average, reduce, reduction))


def gaussian_nll_loss(input: Tensor, target: Tensor, var: Any, full: bool = False,
                      eps: float = 1e-6, reduction: str = "mean") -> Tensor:
    """Gaussian negative log likelihood with predicted variance. Mirrors: ``torch.nn.functional.gaussian_nll_loss``."""
    if not isinstance(var, Tensor):
        var = C.full_like(input, float(var))
    if var.shape != input.shape:
        if input.shape[:-1] == var.shape:
            var = var.unsqueeze(-1)
        elif not (input.shape[:-1] == var.shape[:-1] and var.shape[-1] == 1):
            raise ValueError("var is of incorrect size")
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not a valid value for reduction")
    if bool((var._data < 0).any()):
        raise ValueError("var has negative entry/entries")
    var = var.clone()
    from hookgrad.autograd.grad_mode import no_grad
    with no_grad():
        var.clamp_(min=eps)
    loss = 0.5 * (P.log(var) + (input - target) ** 2 / var)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return _reduce(loss, reduction)


