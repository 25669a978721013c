"""Pooling layers: `MaxPool1d`, `MaxPool2d`, `AvgPool1d`, `AvgPool2d`, `AdaptiveAvgPool1d`,
`AdaptiveAvgPool2d`. Each forwards to `hookgrad.nn.functional`."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from hookgrad._tensor import Tensor
from hookgrad.nn import functional as F
from hookgrad.nn._functional_conv import ntuple
from hookgrad.nn.modules.module import Module

__all__ = [
    "MaxPool1d",
    "MaxPool2d",
    "AvgPool1d",
    "AvgPool2d",
    "AdaptiveAvgPool1d",
    "AdaptiveAvgPool2d",
]

IntOrSeq = int | Sequence[int]


class _MaxPoolNd(Module):
    __constants__ = ["kernel_size", "stride", "padding", "dilation", "return_indices", "ceil_mode"]
    _fn = "max_pool2d"

    def __init__(
        self,
        kernel_size: IntOrSeq,
        stride: IntOrSeq | None = None,
        padding: IntOrSeq = 0,
        dilation: IntOrSeq = 1,
        return_indices: bool = False,
        ceil_mode: bool = False,
    ) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if (stride is not None) else kernel_size
        self.padding = padding
        self.dilation = dilation
        self.return_indices = return_indices
        self.ceil_mode = ceil_mode

    def forward(self, input: Tensor) -> Any:
        return getattr(F, self._fn)(
            input,
            self.kernel_size,
            self.stride,
            self.padding,
            self.dilation,
            ceil_mode=self.ceil_mode,
            return_indices=self.return_indices,
        )

    def extra_repr(self) -> str:
        return (
            f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}, "
            f"dilation={self.dilation}, ceil_mode={self.ceil_mode}"
        )


class MaxPool1d(_MaxPoolNd):
    """Max pooling over ``[N, C, L]`` (or ``[C, L]``).

    Args:
        kernel_size: window size.
        stride: window step (default: `kernel_size`).
        padding: implicit ``-inf`` padding, at most half the window.
        dilation: spacing between window elements.
        return_indices: also return the argmax indices.
        ceil_mode: round the output size up.

    Mirrors: ``torch.nn.MaxPool1d``.
    """

    _fn = "max_pool1d"


class MaxPool2d(_MaxPoolNd):
    """Max pooling over ``[N, C, H, W]`` (or ``[C, H, W]``); ties pick the first maximum.

    Args as `MaxPool1d`, with ints or pairs.

    Example:
        >>> import hookgrad as torch
        >>> torch.nn.MaxPool2d(2)(torch.ones(1, 1, 4, 4)).shape
        torch.Size([1, 1, 2, 2])

    Mirrors: ``torch.nn.MaxPool2d``.
    """

    _fn = "max_pool2d"


class _AvgPoolNd(Module):
    __constants__ = ["kernel_size", "stride", "padding", "ceil_mode", "count_include_pad"]

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AvgPool1d(_AvgPoolNd):
    """Average pooling over ``[N, C, L]`` (or ``[C, L]``).

    Args:
        kernel_size: window size.
        stride: window step (default: `kernel_size`).
        padding: implicit zero padding.
        ceil_mode: round the output size up.
        count_include_pad: count padded zeros in the divisor.

    Mirrors: ``torch.nn.AvgPool1d``.
    """

    def __init__(
        self,
        kernel_size: IntOrSeq,
        stride: IntOrSeq | None = None,
        padding: IntOrSeq = 0,
        ceil_mode: bool = False,
        count_include_pad: bool = True,
    ) -> None:
        super().__init__()
        self.kernel_size = ntuple(kernel_size, 1)
        self.stride = ntuple(stride if stride is not None else kernel_size, 1)
        self.padding = ntuple(padding, 1)
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad

    def forward(self, input: Tensor) -> Tensor:
        return F.avg_pool1d(
            input,
            self.kernel_size,
            self.stride,
            self.padding,
            self.ceil_mode,
            self.count_include_pad,
        )


class AvgPool2d(_AvgPoolNd):
    """Average pooling over ``[N, C, H, W]`` (or ``[C, H, W]``).

    Args:
        kernel_size: window size.
        stride: window step (default: `kernel_size`).
        padding: implicit zero padding.
        ceil_mode: round the output size up.
        count_include_pad: count padded zeros in the divisor.
        divisor_override: divide every window sum by this instead.

    Example:
        >>> import hookgrad as torch
        >>> torch.nn.AvgPool2d(2)(torch.ones(1, 1, 4, 4)).sum().item()
        4.0

    Mirrors: ``torch.nn.AvgPool2d``.
    """

    __constants__ = [
        "kernel_size",
        "stride",
        "padding",
        "ceil_mode",
        "count_include_pad",
        "divisor_override",
    ]

    def __init__(
        self,
        kernel_size: IntOrSeq,
        stride: IntOrSeq | None = None,
        padding: IntOrSeq = 0,
        ceil_mode: bool = False,
        count_include_pad: bool = True,
        divisor_override: int | None = None,
    ) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if (stride is not None) else kernel_size
        self.padding = padding
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad
        self.divisor_override = divisor_override

    def forward(self, input: Tensor) -> Tensor:
        return F.avg_pool2d(
            input,
            self.kernel_size,
            self.stride,
            self.padding,
            self.ceil_mode,
            self.count_include_pad,
            self.divisor_override,
        )


class _AdaptiveAvgPoolNd(Module):
    __constants__ = ["output_size"]

    def __init__(self, output_size: Any) -> None:
        super().__init__()
        self.output_size = output_size

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"


class _AdaptiveMaxPoolNd(Module):
    """Base of the adaptive max pools: holds ``output_size`` and ``return_indices``.

    Mirrors: ``torch.nn.modules.pooling._AdaptiveMaxPoolNd`` (tools import it to recognise
    pooling layers; the concrete ``AdaptiveMaxPool1d/2d/3d`` subclasses add ``forward``).
    """

    __constants__ = ["output_size", "return_indices"]

    def __init__(self, output_size: Any, return_indices: bool = False) -> None:
        super().__init__()
        self.output_size = output_size
        self.return_indices = return_indices

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"


class AdaptiveAvgPool1d(_AdaptiveAvgPoolNd):
    """Average pooling of ``[N, C, L]`` to a fixed length (windows may overlap).

    Args:
        output_size: the target length.

    Mirrors: ``torch.nn.AdaptiveAvgPool1d``.
    """

    def forward(self, input: Tensor) -> Tensor:
        return F.adaptive_avg_pool1d(input, self.output_size)


class AdaptiveAvgPool2d(_AdaptiveAvgPoolNd):
    """Average pooling of ``[N, C, H, W]`` to a fixed ``output_size`` whatever the input size.

    Args:
        output_size: int or pair; ``None`` entries keep the input's size.

    Example:
        >>> import hookgrad as torch
        >>> torch.nn.AdaptiveAvgPool2d((2, 3))(torch.ones(1, 2, 7, 5)).shape
        torch.Size([1, 2, 2, 3])

    Mirrors: ``torch.nn.AdaptiveAvgPool2d``.
    """

    def forward(self, input: Tensor) -> Tensor:
        return F.adaptive_avg_pool2d(input, self.output_size)
