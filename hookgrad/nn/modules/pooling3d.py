"""More pooling layers: `MaxPool3d`, `AvgPool3d`, `AdaptiveAvgPool3d`, the adaptive max pools
(1-d to 3-d) and the max unpools (1-d to 3-d). Each forwards to `hookgrad.nn.functional` and
shares its base class with PyTorch's (``_MaxPoolNd``, ``_AvgPoolNd``...), so tools that key on
those bases see them."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any

from hookgrad._tensor import Tensor
from hookgrad.nn import functional as F
from hookgrad.nn._functional_conv import ntuple
from hookgrad.nn.modules.module import Module
from hookgrad.nn.modules.pooling import (
    _AdaptiveAvgPoolNd,
    _AdaptiveMaxPoolNd,
    _AvgPoolNd,
    _MaxPoolNd,
)

__all__ = [
    "MaxPool3d", "AvgPool3d", "AdaptiveAvgPool3d", "AdaptiveMaxPool1d", "AdaptiveMaxPool2d",
    "AdaptiveMaxPool3d", "MaxUnpool1d", "MaxUnpool2d", "MaxUnpool3d",
]
IntOrSeq = int | Sequence[int]


class MaxPool3d(_MaxPoolNd):
    """Max pooling over ``[N, C, D, H, W]`` (or ``[C, D, H, W]``).

    Args as `MaxPool2d`, with ints or triples.

    Mirrors: ``torch.nn.MaxPool3d``.
    """

    _fn = "max_pool3d"


class AvgPool3d(_AvgPoolNd):
    """Average pooling over ``[N, C, D, H, W]`` (or ``[C, D, H, W]``).

    Args as `AvgPool2d`, with ints or triples.

    Mirrors: ``torch.nn.AvgPool3d``.
    """

    __constants__ = ["kernel_size", "stride", "padding", "ceil_mode", "count_include_pad",
                     "divisor_override"]

    def __init__(self, kernel_size: IntOrSeq, stride: IntOrSeq | None = None,
                 padding: IntOrSeq = 0, ceil_mode: bool = False, count_include_pad: bool = True,
                 divisor_override: int | None = None) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if (stride is not None) else kernel_size
        self.padding = padding
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad
        self.divisor_override = divisor_override

    def forward(self, input: Tensor) -> Tensor:
        return F.avg_pool3d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad, self.divisor_override)


class AdaptiveAvgPool3d(_AdaptiveAvgPoolNd):
    """Average pooling of ``[N, C, D, H, W]`` to a fixed ``output_size``.

    Mirrors: ``torch.nn.AdaptiveAvgPool3d``.
    """

    def forward(self, input: Tensor) -> Tensor:
        return F.adaptive_avg_pool3d(input, self.output_size)


class _AdaptiveMaxPoolForward(_AdaptiveMaxPoolNd):
    """The forward the adaptive max pools share (PyTorch's base, `_AdaptiveMaxPoolNd`, is in
    ``pooling.py``, where tools look for it)."""

    _fn = "adaptive_max_pool2d"

    def forward(self, input: Tensor) -> Any:
        return getattr(F, self._fn)(input, self.output_size, self.return_indices)


class AdaptiveMaxPool1d(_AdaptiveMaxPoolForward):
    """Max pooling of ``[N, C, L]`` to a fixed length.

    Mirrors: ``torch.nn.AdaptiveMaxPool1d``.
    """

    _fn = "adaptive_max_pool1d"


class AdaptiveMaxPool2d(_AdaptiveMaxPoolForward):
    """Max pooling of ``[N, C, H, W]`` to a fixed ``output_size`` (windows may overlap).

    Example:
        >>> import hookgrad as torch
        >>> torch.nn.AdaptiveMaxPool2d(2)(torch.ones(1, 1, 5, 5)).shape
        torch.Size([1, 1, 2, 2])

    Mirrors: ``torch.nn.AdaptiveMaxPool2d``.
    """

    _fn = "adaptive_max_pool2d"


class AdaptiveMaxPool3d(_AdaptiveMaxPoolForward):
    """Max pooling of ``[N, C, D, H, W]`` to a fixed ``output_size``.

    Mirrors: ``torch.nn.AdaptiveMaxPool3d``.
    """

    _fn = "adaptive_max_pool3d"


class _MaxUnpoolNd(Module):
    """Base of the max unpools. Mirrors: ``torch.nn.modules.pooling._MaxUnpoolNd``."""

    _nd = 2

    def __init__(self, kernel_size: IntOrSeq, stride: IntOrSeq | None = None,
                 padding: IntOrSeq = 0) -> None:
        super().__init__()
        self.kernel_size = ntuple(kernel_size, self._nd)
        self.stride = ntuple(stride if stride is not None else kernel_size, self._nd)
        self.padding = ntuple(padding, self._nd)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"

    def forward(self, input: Tensor, indices: Tensor, output_size: Any = None) -> Tensor:
        fn = getattr(F, f"max_unpool{self._nd}d")
        return fn(input, indices, self.kernel_size, self.stride, self.padding, output_size)


class MaxUnpool1d(_MaxUnpoolNd):
    """The partial inverse of `MaxPool1d` (zeros except at the argmax positions).

    Mirrors: ``torch.nn.MaxUnpool1d``.
    """

    _nd = 1


class MaxUnpool2d(_MaxUnpoolNd):
    """The partial inverse of `MaxPool2d`.

    Mirrors: ``torch.nn.MaxUnpool2d``.
    """

    _nd = 2


class MaxUnpool3d(_MaxUnpoolNd):
    """The partial inverse of `MaxPool3d`.

    Mirrors: ``torch.nn.MaxUnpool3d``.
    """

    _nd = 3


# PyTorch's module path (torch.nn.modules.pooling.<name>): tools import these classes from there.
_home = sys.modules["hookgrad.nn.modules.pooling"]
for _name in (*__all__, "_MaxUnpoolNd"):
    setattr(_home, _name, globals()[_name])
_home.__all__ = [*_home.__all__, *(n for n in __all__ if n not in _home.__all__)]
