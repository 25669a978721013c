"""The CTC loss layer, published at PyTorch's path ``nn.modules.loss``.

Mirrors: ``torch.nn.CTCLoss``.
"""

from __future__ import annotations

from typing import Any

from hookgrad._tensor import Tensor
from hookgrad.nn import functional as F
from hookgrad.nn.modules._paths import publish
from hookgrad.nn.modules.loss import _Loss

__all__ = ["CTCLoss"]


class CTCLoss(_Loss):
    """Connectionist temporal classification loss. Mirrors: ``torch.nn.CTCLoss``."""

    __constants__ = ["blank", "reduction"]
    blank: int
    zero_infinity: bool

    def __init__(self, blank: int = 0, reduction: str = "mean",
                 zero_infinity: bool = False) -> None:
        super().__init__(reduction=reduction)
        self.blank = blank
        self.zero_infinity = zero_infinity

    def forward(self, log_probs: Tensor, targets: Tensor, input_lengths: Any,
                target_lengths: Any) -> Tensor:
        return F.ctc_loss(log_probs, targets, input_lengths, target_lengths, self.blank,
                          self.reduction, self.zero_infinity)


publish("hookgrad.nn.modules.loss", globals(), __all__)
