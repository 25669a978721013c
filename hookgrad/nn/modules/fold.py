"""`Fold` and `Unfold` (col2im / im2col). Mirrors: ``torch.nn.modules.fold``."""

from __future__ import annotations

from typing import Any

from hookgrad._tensor import Tensor
from hookgrad.nn import functional as F
from hookgrad.nn.modules.module import Module

__all__ = ["Fold", "Unfold"]


class Fold(Module):
    """Sum sliding-block columns into an image. Mirrors: ``torch.nn.Fold``."""

    __constants__ = ["output_size", "kernel_size", "dilation", "padding", "stride"]

    def __init__(self, output_size: Any, kernel_size: Any, dilation: Any = 1, padding: Any = 0,
                 stride: Any = 1) -> None:
        super().__init__()
        self.output_size, self.kernel_size = output_size, kernel_size
        self.dilation, self.padding, self.stride = dilation, padding, stride

    def forward(self, input: Tensor) -> Tensor:
        return F.fold(input, self.output_size, self.kernel_size, self.dilation, self.padding,
                      self.stride)

    def extra_repr(self) -> str:
        return ("output_size={output_size}, kernel_size={kernel_size}, dilation={dilation}, "
                "padding={padding}, stride={stride}".format(**self.__dict__))


class Unfold(Module):
    """Extract sliding blocks as columns. Mirrors: ``torch.nn.Unfold``."""

    __constants__ = ["kernel_size", "dilation", "padding", "stride"]

    def __init__(self, kernel_size: Any, dilation: Any = 1, padding: Any = 0,
                 stride: Any = 1) -> None:
        super().__init__()
        self.kernel_size, self.dilation, self.padding, self.stride = (kernel_size, dilation,
                                                                      padding, stride)

    def forward(self, input: Tensor) -> Tensor:
        return F.unfold(input, self.kernel_size, self.dilation, self.padding, self.stride)

    def extra_repr(self) -> str:
        return ("kernel_size={kernel_size}, dilation={dilation}, padding={padding}, "
                "stride={stride}".format(**self.__dict__))
