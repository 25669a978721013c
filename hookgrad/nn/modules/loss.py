"""Loss modules; each forwards to `hookgrad.nn.functional`."""

from __future__ import annotations

from typing import Any

from hookgrad._tensor import Tensor
from hookgrad.nn import functional as F
from hookgrad.nn._functional_loss import legacy_get_string
from hookgrad.nn.modules.module import Module

__all__ = [
    "L1Loss", "MSELoss", "SmoothL1Loss", "HuberLoss", "NLLLoss", "CrossEntropyLoss",
    "BCELoss", "BCEWithLogitsLoss", "KLDivLoss",
]


class _Loss(Module):
    """Base of the losses: resolves the legacy ``size_average``/``reduce`` arguments."""

    reduction: str

    def __init__(self, size_average: Any = None, reduce: Any = None,
                 reduction: str = "mean") -> None:
        super().__init__()
        if size_average is not None or reduce is not None:
            self.reduction = legacy_get_string(size_average, reduce)
        else:
            self.reduction = reduction


class _WeightedLoss(_Loss):
    """A loss with an optional per-class ``weight`` buffer."""

    def __init__(self, weight: Tensor | None = None, size_average: Any = None,
                 reduce: Any = None, reduction: str = "mean") -> None:
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", weight)
        self.weight: Tensor | None


class L1Loss(_Loss):
    """Mean absolute error. Mirrors: ``torch.nn.L1Loss``."""

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.l1_loss(input, target, reduction=self.reduction)


class MSELoss(_Loss):
    """Mean squared error. Mirrors: ``torch.nn.MSELoss``."""

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.mse_loss(input, target, reduction=self.reduction)


class SmoothL1Loss(_Loss):
    """Smooth L1 with threshold `beta`. Mirrors: ``torch.nn.SmoothL1Loss``."""

    def __init__(self, size_average: Any = None, reduce: Any = None, reduction: str = "mean",
                 beta: float = 1.0) -> None:
        super().__init__(size_average, reduce, reduction)
        self.beta = beta

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.smooth_l1_loss(input, target, reduction=self.reduction, beta=self.beta)


class HuberLoss(_Loss):
    """Huber loss with threshold `delta`. Mirrors: ``torch.nn.HuberLoss``."""

    def __init__(self, reduction: str = "mean", delta: float = 1.0) -> None:
        super().__init__(reduction=reduction)
        self.delta = delta

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.huber_loss(input, target, reduction=self.reduction, delta=self.delta)


class NLLLoss(_WeightedLoss):
    """Negative log likelihood over class indices. Mirrors: ``torch.nn.NLLLoss``."""

    def __init__(self, weight: Tensor | None = None, size_average: Any = None,
                 ignore_index: int = -100, reduce: Any = None, reduction: str = "mean") -> None:
        super().__init__(weight, size_average, reduce, reduction)
        self.ignore_index = ignore_index

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.nll_loss(input, target, weight=self.weight, ignore_index=self.ignore_index,
                          reduction=self.reduction)


class CrossEntropyLoss(_WeightedLoss):
    """Cross entropy over logits (class indices or class probabilities; label smoothing).

    Mirrors: ``torch.nn.CrossEntropyLoss``.
    """

    def __init__(self, weight: Tensor | None = None, size_average: Any = None,
                 ignore_index: int = -100, reduce: Any = None, reduction: str = "mean",
                 label_smoothing: float = 0.0) -> None:
        super().__init__(weight, size_average, reduce, reduction)
        self.ignore_index = ignore_index
        self.label_smoothing = label_smoothing

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.cross_entropy(input, target, weight=self.weight,
                               ignore_index=self.ignore_index, reduction=self.reduction,
                               label_smoothing=self.label_smoothing)


class BCELoss(_WeightedLoss):
    """Binary cross entropy on probabilities. Mirrors: ``torch.nn.BCELoss``."""

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.binary_cross_entropy(input, target, weight=self.weight,
                                      reduction=self.reduction)


class BCEWithLogitsLoss(_Loss):
    """Sigmoid + binary cross entropy (with ``pos_weight``).

    Mirrors: ``torch.nn.BCEWithLogitsLoss``.
    """

    def __init__(self, weight: Tensor | None = None, size_average: Any = None,
                 reduce: Any = None, reduction: str = "mean",
                 pos_weight: Tensor | None = None) -> None:
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", weight)
        self.register_buffer("pos_weight", pos_weight)
        self.weight: Tensor | None
        self.pos_weight: Tensor | None

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.binary_cross_entropy_with_logits(input, target, self.weight,
                                                  pos_weight=self.pos_weight,
                                                  reduction=self.reduction)


class KLDivLoss(_Loss):
    """Kullback-Leibler divergence (`input` as log-probabilities).

    Mirrors: ``torch.nn.KLDivLoss``.
    """

    def __init__(self, size_average: Any = None, reduce: Any = None, reduction: str = "mean",
                 log_target: bool = False) -> None:
        super().__init__(size_average, reduce, reduction)
        self.log_target = log_target

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.kl_div(input, target, reduction=self.reduction, log_target=self.log_target)
