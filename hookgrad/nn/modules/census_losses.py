"""The margin, embedding and likelihood loss modules (published at ``nn.modules.loss``).

Mirrors: ``torch.nn.MarginRankingLoss``, ``HingeEmbeddingLoss``, ``CosineEmbeddingLoss``,
``SoftMarginLoss``, ``MultiLabelSoftMarginLoss``, ``MultiMarginLoss``, ``MultiLabelMarginLoss``,
``TripletMarginLoss``, ``TripletMarginWithDistanceLoss``, ``PoissonNLLLoss``,
``GaussianNLLLoss``, ``NLLLoss2d``; each forwards to its ``nn.functional`` function.
"""

from __future__ import annotations

from typing import Any, Callable

from hookgrad._tensor import Tensor
from hookgrad.nn import functional as F
from hookgrad.nn.modules._paths import publish
from hookgrad.nn.modules.loss import NLLLoss, _Loss, _WeightedLoss

__all__ = ["MarginRankingLoss", "HingeEmbeddingLoss", "CosineEmbeddingLoss", "SoftMarginLoss",
           "MultiLabelSoftMarginLoss", "MultiMarginLoss", "MultiLabelMarginLoss",
           "TripletMarginLoss", "TripletMarginWithDistanceLoss", "PoissonNLLLoss",
           "GaussianNLLLoss", "NLLLoss2d"]


class _MarginLoss(_Loss):
    __constants__ = ["margin", "reduction"]
    _default = 0.0

    def __init__(self, margin: float | None = None, size_average: Any = None, reduce: Any = None,
                 reduction: str = "mean") -> None:
        super().__init__(size_average, reduce, reduction)
        self.margin = self._default if margin is None else margin


class MarginRankingLoss(_MarginLoss):
    """Mirrors: ``torch.nn.MarginRankingLoss``."""

    def forward(self, input1: Tensor, input2: Tensor, target: Tensor) -> Tensor:
        return F.margin_ranking_loss(input1, input2, target, margin=self.margin,
                                     reduction=self.reduction)


class HingeEmbeddingLoss(_MarginLoss):
    """Mirrors: ``torch.nn.HingeEmbeddingLoss``."""

    _default = 1.0

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.hinge_embedding_loss(input, target, margin=self.margin,
                                      reduction=self.reduction)


class CosineEmbeddingLoss(_MarginLoss):
    """Mirrors: ``torch.nn.CosineEmbeddingLoss``."""

    def forward(self, input1: Tensor, input2: Tensor, target: Tensor) -> Tensor:
        return F.cosine_embedding_loss(input1, input2, target, margin=self.margin,
                                       reduction=self.reduction)


class SoftMarginLoss(_Loss):
    """Mirrors: ``torch.nn.SoftMarginLoss``."""

    __constants__ = ["reduction"]

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.soft_margin_loss(input, target, reduction=self.reduction)


class MultiLabelMarginLoss(_Loss):
    """Mirrors: ``torch.nn.MultiLabelMarginLoss``."""

    __constants__ = ["reduction"]

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.multilabel_margin_loss(input, target, reduction=self.reduction)


class MultiLabelSoftMarginLoss(_WeightedLoss):
    """Mirrors: ``torch.nn.MultiLabelSoftMarginLoss``."""

    __constants__ = ["reduction"]

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.multilabel_soft_margin_loss(input, target, weight=self.weight,
                                             reduction=self.reduction)


class MultiMarginLoss(_WeightedLoss):
    """Mirrors: ``torch.nn.MultiMarginLoss``."""

    __constants__ = ["p", "margin", "reduction"]

    def __init__(self, p: int = 1, margin: float = 1.0, weight: Tensor | None = None,
                 size_average: Any = None, reduce: Any = None, reduction: str = "mean") -> None:
        super().__init__(weight, size_average, reduce, reduction)
        if p not in (1, 2):
            raise ValueError("only p == 1 and p == 2 supported")
        if weight is not None and weight.dim() != 1:
            raise ValueError(f"MultiMarginLoss: expected weight to be None or 1D tensor, got "
                             f"{weight.dim()}D instead")
        self.p, self.margin = p, margin

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.multi_margin_loss(input, target, p=self.p, margin=self.margin,
                                   weight=self.weight, reduction=self.reduction)


class TripletMarginLoss(_Loss):
    """Mirrors: ``torch.nn.TripletMarginLoss``."""

    __constants__ = ["margin", "p", "eps", "swap", "reduction"]

    def __init__(self, margin: float = 1.0, p: float = 2.0, eps: float = 1e-6, swap: bool = False,
                 size_average: Any = None, reduce: Any = None, reduction: str = "mean") -> None:
        super().__init__(size_average, reduce, reduction)
        if margin <= 0:
            raise ValueError(f"TripletMarginLoss: expected margin to be greater than 0, got "
                             f"{margin} instead")
        self.margin, self.p, self.eps, self.swap = margin, p, eps, swap

    def forward(self, anchor: Tensor, positive: Tensor, negative: Tensor) -> Tensor:
        return F.triplet_margin_loss(anchor, positive, negative, margin=self.margin, p=self.p,
                                     eps=self.eps, swap=self.swap, reduction=self.reduction)


class TripletMarginWithDistanceLoss(_Loss):
    """Mirrors: ``torch.nn.TripletMarginWithDistanceLoss``."""

    __constants__ = ["margin", "swap", "reduction"]

    def __init__(self, *, distance_function: Callable | None = None, margin: float = 1.0,
                 swap: bool = False, reduction: str = "mean") -> None:
        super().__init__(reduction=reduction)
        if margin <= 0:
            raise ValueError(f"TripletMarginWithDistanceLoss: expected margin to be greater "
                             f"than 0, got {margin} instead")
        self.distance_function, self.margin, self.swap = distance_function, margin, swap

    def forward(self, anchor: Tensor, positive: Tensor, negative: Tensor) -> Tensor:
        return F.triplet_margin_with_distance_loss(
            anchor, positive, negative, distance_function=self.distance_function,
            margin=self.margin, swap=self.swap, reduction=self.reduction)


class PoissonNLLLoss(_Loss):
    """Mirrors: ``torch.nn.PoissonNLLLoss``."""

    __constants__ = ["log_input", "full", "eps", "reduction"]

    def __init__(self, log_input: bool = True, full: bool = False, size_average: Any = None,
                 eps: float = 1e-8, reduce: Any = None, reduction: str = "mean") -> None:
        super().__init__(size_average, reduce, reduction)
        self.log_input, self.full, self.eps = log_input, full, eps

    def forward(self, log_input: Tensor, target: Tensor) -> Tensor:
        return F.poisson_nll_loss(log_input, target, log_input=self.log_input, full=self.full,
                                  eps=self.eps, reduction=self.reduction)


class GaussianNLLLoss(_Loss):
    """Mirrors: ``torch.nn.GaussianNLLLoss``."""

    __constants__ = ["full", "eps", "reduction"]

    def __init__(self, *, full: bool = False, eps: float = 1e-6, reduction: str = "mean") -> None:
        super().__init__(None, None, reduction)
        self.full, self.eps = full, eps

    def forward(self, input: Tensor, target: Tensor, var: Any) -> Tensor:
        return F.gaussian_nll_loss(input, target, var, full=self.full, eps=self.eps,
                                   reduction=self.reduction)


class NLLLoss2d(NLLLoss):
    """The old 2-D spelling of `NLLLoss`. Mirrors: ``torch.nn.NLLLoss2d``."""


publish("hookgrad.nn.modules.loss", globals(), __all__)
