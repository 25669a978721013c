"""Upsampling layers: `Upsample`, `UpsamplingNearest2d`, `UpsamplingBilinear2d`, forwarding to
`hookgrad.nn.functional.interpolate`. Mirrors: ``torch.nn.modules.upsampling``."""

from __future__ import annotations

from typing import Any

from hookgrad._tensor import Tensor
from hookgrad.nn import functional as F
from hookgrad.nn.modules.module import Module

__all__ = ["Upsample", "UpsamplingNearest2d", "UpsamplingBilinear2d"]


class Upsample(Module):
    """Resize 1-d to 3-d spatial inputs (see `interpolate` for the modes).

    Args:
        size: output spatial size (int or tuple).
        scale_factor: multiplier for the spatial size (float or tuple).
        mode: ``nearest``, ``linear``, ``bilinear``, ``bicubic``, ``trilinear``...
        align_corners: for the interpolating modes.
        recompute_scale_factor: compute the scale from the output size instead.

    Example:
        >>> import hookgrad as torch
        >>> torch.nn.Upsample(scale_factor=2)(torch.ones(1, 1, 2, 2)).shape
        torch.Size([1, 1, 4, 4])

    Mirrors: ``torch.nn.Upsample``.
    """

    __constants__ = ["size", "scale_factor", "mode", "align_corners", "name",
                     "recompute_scale_factor"]

    def __init__(self, size: Any = None, scale_factor: Any = None, mode: str = "nearest",
                 align_corners: bool | None = None,
                 recompute_scale_factor: bool | None = None) -> None:
        super().__init__()
        self.name = type(self).__name__
        self.size = size
        if isinstance(scale_factor, tuple):
            self.scale_factor: Any = tuple(float(f) for f in scale_factor)
        else:
            self.scale_factor = float(scale_factor) if scale_factor else None
        self.mode = mode
        self.align_corners = align_corners
        self.recompute_scale_factor = recompute_scale_factor

    def forward(self, input: Tensor) -> Tensor:
        return F.interpolate(input, self.size, self.scale_factor, self.mode, self.align_corners,
                             recompute_scale_factor=self.recompute_scale_factor)

    def __setstate__(self, state: dict) -> None:
        state.setdefault("recompute_scale_factor", True)  # pickles older than the option
        super().__setstate__(state)

    def extra_repr(self) -> str:
        if self.scale_factor is not None:
            info = "scale_factor=" + repr(self.scale_factor)
        else:
            info = "size=" + repr(self.size)
        return info + ", mode=" + repr(self.mode)


class UpsamplingNearest2d(Upsample):
    """Nearest-neighbour upsampling of ``[N, C, H, W]``.

    Mirrors: ``torch.nn.UpsamplingNearest2d``.
    """

    def __init__(self, size: Any = None, scale_factor: Any = None) -> None:
        super().__init__(size, scale_factor, mode="nearest")


class UpsamplingBilinear2d(Upsample):
    """Bilinear upsampling of ``[N, C, H, W]`` with ``align_corners=True``.

    Mirrors: ``torch.nn.UpsamplingBilinear2d``.
    """

    def __init__(self, size: Any = None, scale_factor: Any = None) -> None:
        super().__init__(size, scale_factor, mode="bilinear", align_corners=True)
