"""`ChannelShuffle`. Mirrors: ``torch.nn.modules.channelshuffle``."""

from __future__ import annotations

from hookgrad._tensor import Tensor
from hookgrad.nn import functional as F
from hookgrad.nn.modules.module import Module

__all__ = ["ChannelShuffle"]


class ChannelShuffle(Module):
    """Interleave `groups` channel groups. Mirrors: ``torch.nn.ChannelShuffle``."""

    __constants__ = ["groups"]

    def __init__(self, groups: int) -> None:
        super().__init__()
        self.groups = groups

    def forward(self, input: Tensor) -> Tensor:
        return F.channel_shuffle(input, self.groups)

    def extra_repr(self) -> str:
        return f"groups={self.groups}"
