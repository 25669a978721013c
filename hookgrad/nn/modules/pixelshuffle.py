"""`PixelShuffle` and `PixelUnshuffle`. Mirrors: ``torch.nn.modules.pixelshuffle``."""

from __future__ import annotations

from hookgrad._tensor import Tensor
from hookgrad.nn import functional as F
from hookgrad.nn.modules.module import Module

__all__ = ["PixelShuffle", "PixelUnshuffle"]


class PixelShuffle(Module):
    """``[*, C*r*r, H, W] -> [*, C, H*r, W*r]``.

    Example:
        >>> import hookgrad as torch
        >>> torch.nn.PixelShuffle(2)(torch.ones(1, 4, 3, 3)).shape
        torch.Size([1, 1, 6, 6])

    Mirrors: ``torch.nn.PixelShuffle``.
    """

    __constants__ = ["upscale_factor"]

    def __init__(self, upscale_factor: int) -> None:
        super().__init__()
        self.upscale_factor = upscale_factor

    def forward(self, input: Tensor) -> Tensor:
        return F.pixel_shuffle(input, self.upscale_factor)

    def extra_repr(self) -> str:
        return f"upscale_factor={self.upscale_factor}"


class PixelUnshuffle(Module):
    """``[*, C, H*r, W*r] -> [*, C*r*r, H, W]``.

    Mirrors: ``torch.nn.PixelUnshuffle``.
    """

    __constants__ = ["downscale_factor"]

    def __init__(self, downscale_factor: int) -> None:
        super().__init__()
        self.downscale_factor = downscale_factor

    def forward(self, input: Tensor) -> Tensor:
        return F.pixel_unshuffle(input, self.downscale_factor)

    def extra_repr(self) -> str:
        return f"downscale_factor={self.downscale_factor}"
