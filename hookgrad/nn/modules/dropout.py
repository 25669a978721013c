"""`Dropout` and `_DropoutNd`, the base of every dropout module."""

from __future__ import annotations

from hookgrad._tensor import Tensor
from hookgrad.nn import functional as F
from hookgrad.nn.modules.module import Module

__all__ = ["Dropout"]


class _DropoutNd(Module):
    """Holds `p` and `inplace` for every dropout module (tools match on it with isinstance).

    Mirrors: ``torch.nn.modules.dropout._DropoutNd``.
    """

    __constants__ = ["p", "inplace"]

    def __init__(self, p: float = 0.5, inplace: bool = False) -> None:
        super().__init__()
        if p < 0 or p > 1:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p = p
        self.inplace = inplace

    def extra_repr(self) -> str:
        return f"p={self.p}, inplace={self.inplace}"


class Dropout(_DropoutNd):
    """Randomly zero elements with probability `p` during training, scaling the rest by
    ``1/(1-p)``; the identity in evaluation mode.

    Args:
        p: probability of an element being zeroed.
        inplace: do the operation in place.

    The mask comes from hookgrad's generator (values differ from PyTorch's for a given seed;
    the distribution is the same).

    Mirrors: ``torch.nn.Dropout``.
    """

    def forward(self, input: Tensor) -> Tensor:
        return F.dropout(input, self.p, self.training, self.inplace)
