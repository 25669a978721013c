"""Convolution layers: `Conv1d`, `Conv2d`, `ConvTranspose1d`, `ConvTranspose2d`."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from hookgrad._functional.rearrange import pad as _pad
from hookgrad._tensor import Tensor
from hookgrad.nn import functional as F
from hookgrad.nn import init
from hookgrad.nn._functional_conv import ntuple
from hookgrad.nn.modules.module import Module
from hookgrad.nn.parameter import Parameter

__all__ = ["Conv1d", "Conv2d", "ConvTranspose1d", "ConvTranspose2d"]

IntOrSeq = int | Sequence[int]
_PADDING_MODES = {"zeros", "reflect", "replicate", "circular"}


def _empty(*shape: int, dtype: Any = None) -> Tensor:
    from hookgrad._functional.creation import empty

    return empty(*shape, dtype=dtype)


class _ConvNd(Module):
    """Shared state, checks, initialisation and repr of the convolution layers."""

    __constants__ = [
        "stride",
        "padding",
        "dilation",
        "groups",
        "padding_mode",
        "output_padding",
        "in_channels",
        "out_channels",
        "kernel_size",
    ]

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size: tuple[int, ...],
        stride: tuple[int, ...],
        padding: tuple[int, ...] | str,
        dilation: tuple[int, ...],
        transposed: bool,
        output_padding: tuple[int, ...],
        groups: int,
        bias: bool,
        padding_mode: str,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__()
        _check_args(in_channels, out_channels, groups, padding, stride, padding_mode)
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.kernel_size = kernel_size
        self.stride = stride
        self.padding = padding
        self.dilation = dilation
        self.transposed = transposed
        self.output_padding = output_padding
        self.groups = groups
        self.padding_mode = padding_mode
        self._reversed_padding_repeated_twice = _reversed_padding(padding, kernel_size, dilation)
        if transposed:
            shape = (in_channels, out_channels // groups, *kernel_size)
        else:
            shape = (out_channels, in_channels // groups, *kernel_size)
        self.weight = Parameter(_empty(*shape, dtype=dtype))
        if bias:
            self.bias = Parameter(_empty(out_channels, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """PyTorch's default scheme: ``kaiming_uniform_(a=sqrt(5))`` for the weight, the bias
        from U(-1/sqrt(fan_in), 1/sqrt(fan_in))."""
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            if fan_in != 0:
                bound = 1 / math.sqrt(fan_in)
                init.uniform_(self.bias, -bound, bound)

    def extra_repr(self) -> str:
        s = (
            f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, "
            f"stride={self.stride}"
        )
        if self.padding != (0,) * len(self.padding):
            s += f", padding={self.padding}"
        if self.dilation != (1,) * len(self.dilation):
            s += f", dilation={self.dilation}"
        if self.output_padding != (0,) * len(self.output_padding):
            s += f", output_padding={self.output_padding}"
        if self.groups != 1:
            s += f", groups={self.groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += f", padding_mode={self.padding_mode}"
        return s

    def __setstate__(self, state: dict) -> None:
        super().__setstate__(state)
        if not hasattr(self, "padding_mode"):
            self.padding_mode = "zeros"


def _check_args(
    in_channels: int,
    out_channels: int,
    groups: int,
    padding: Any,
    stride: tuple[int, ...],
    padding_mode: str,
) -> None:
    if groups <= 0:
        raise ValueError("groups must be a positive integer")
    if in_channels % groups != 0:
        raise ValueError("in_channels must be divisible by groups")
    if out_channels % groups != 0:
        raise ValueError("out_channels must be divisible by groups")
    if isinstance(padding, str):
        valid = {"same", "valid"}  # a set, printed in hash order as PyTorch prints it
        if padding not in valid:
            raise ValueError(f"Invalid padding string {padding!r}, should be one of {valid}")
        if padding == "same" and any(s != 1 for s in stride):
            raise ValueError("padding='same' is not supported for strided convolutions")
    if padding_mode not in _PADDING_MODES:
        raise ValueError(
            f"padding_mode must be one of {_PADDING_MODES}, but got padding_mode='{padding_mode}'"
        )


def _reversed_padding(padding: Any, kernel: tuple[int, ...], dilation: tuple[int, ...]) -> list:
    """F.pad's argument (last dim first) for the non-zero padding modes."""
    if isinstance(padding, str):
        out = [0, 0] * len(kernel)
        if padding == "same":
            for d, k, i in zip(dilation, kernel, range(len(kernel) - 1, -1, -1), strict=True):
                total = d * (k - 1)
                out[2 * i] = total // 2
                out[2 * i + 1] = total - total // 2
        return out
    return [p for p in reversed(padding) for _ in range(2)]


class _Conv(_ConvNd):
    _nd = 2

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size: IntOrSeq,
        stride: IntOrSeq = 1,
        padding: IntOrSeq | str = 0,
        dilation: IntOrSeq = 1,
        groups: int = 1,
        bias: bool = True,
        padding_mode: str = "zeros",
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        n = self._nd
        pad = padding if isinstance(padding, str) else ntuple(padding, n)
        super().__init__(
            in_channels,
            out_channels,
            ntuple(kernel_size, n),
            ntuple(stride, n),
            pad,
            ntuple(dilation, n),
            False,
            (0,) * n,
            groups,
            bias,
            padding_mode,
            device,
            dtype,
        )

    def _conv_forward(self, input: Tensor, weight: Tensor, bias: Tensor | None) -> Tensor:
        fn = F.conv1d if self._nd == 1 else F.conv2d
        if self.padding_mode != "zeros":
            padded = _pad(input, self._reversed_padding_repeated_twice, mode=self.padding_mode)
            return fn(padded, weight, bias, self.stride, 0, self.dilation, self.groups)
        return fn(input, weight, bias, self.stride, self.padding, self.dilation, self.groups)

    def forward(self, input: Tensor) -> Tensor:
        return self._conv_forward(input, self.weight, self.bias)


class Conv1d(_Conv):
    """1-d convolution over ``[N, C_in, L]`` (or ``[C_in, L]``) inputs.

    Args:
        in_channels, out_channels: channel counts.
        kernel_size, stride, padding, dilation: ints or one-element tuples; `padding` may be
            ``"valid"`` or ``"same"``.
        groups: independent channel groups.
        bias: learn a bias.
        padding_mode: ``"zeros"``, ``"reflect"``, ``"replicate"`` or ``"circular"``.
        device, dtype: factory arguments (``"cpu"`` only).

    Weight ``[out, in/groups, K]``; initialised as PyTorch's (``kaiming_uniform_(a=sqrt(5))``,
    bias from U(-1/sqrt(fan_in), 1/sqrt(fan_in))).

    Example:
        >>> import hookgrad as torch
        >>> torch.nn.Conv1d(2, 4, 3)(torch.ones(1, 2, 10)).shape
        torch.Size([1, 4, 8])

    Mirrors: ``torch.nn.Conv1d``.
    """

    _nd = 1


class Conv2d(_Conv):
    """2-d convolution over ``[N, C_in, H, W]`` (or ``[C_in, H, W]``) inputs.

    Args as `Conv1d`, with ints or pairs. Weight ``[out, in/groups, KH, KW]``.

    Example:
        >>> import hookgrad as torch
        >>> torch.nn.Conv2d(1, 8, 3, padding=1)(torch.ones(2, 1, 5, 5)).shape
        torch.Size([2, 8, 5, 5])

    Mirrors: ``torch.nn.Conv2d``.
    """

    _nd = 2


class _ConvTransposeNd(_ConvNd):
    _nd = 2

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size: IntOrSeq,
        stride: IntOrSeq = 1,
        padding: IntOrSeq = 0,
        output_padding: IntOrSeq = 0,
        groups: int = 1,
        bias: bool = True,
        dilation: IntOrSeq = 1,
        padding_mode: str = "zeros",
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        if padding_mode != "zeros":
            raise ValueError(f'Only "zeros" padding mode is supported for {type(self).__name__}')
        n = self._nd
        super().__init__(
            in_channels,
            out_channels,
            ntuple(kernel_size, n),
            ntuple(stride, n),
            ntuple(padding, n),
            ntuple(dilation, n),
            True,
            ntuple(output_padding, n),
            groups,
            bias,
            padding_mode,
            device,
            dtype,
        )

    def _output_padding(self, input: Tensor, output_size: Sequence[int] | None) -> tuple:
        """The output padding that yields `output_size` (PyTorch's rule and messages)."""
        n = self._nd
        if output_size is None:
            return self.output_padding
        non_spatial = 2 if input.dim() == n + 2 else 1
        size = list(output_size)
        if len(size) == non_spatial + n:
            size = size[non_spatial:]
        if len(size) != n:
            raise ValueError(
                f"ConvTranspose{n}D: for {input.dim()}D input, output_size must have {n} or "
                f"{non_spatial + n} elements (got {len(size)})"
            )
        mins = [
            (input.size(d + non_spatial) - 1) * self.stride[d]
            - 2 * self.padding[d]
            + self.dilation[d] * (self.kernel_size[d] - 1)
            + 1
            for d in range(n)
        ]
        maxs = [mins[d] + self.stride[d] - 1 for d in range(n)]
        for s, lo, hi in zip(size, mins, maxs, strict=True):
            if s < lo or s > hi:
                raise ValueError(
                    f"requested an output size of {size}, but valid sizes range from {mins} to "
                    f"{maxs} (for an input of {input.size()[2:]})"
                )
        return tuple(size[d] - mins[d] for d in range(n))

    def forward(self, input: Tensor, output_size: Sequence[int] | None = None) -> Tensor:
        op = self._output_padding(input, output_size)
        fn = F.conv_transpose1d if self._nd == 1 else F.conv_transpose2d
        return fn(
            input, self.weight, self.bias, self.stride, self.padding, op, self.groups, self.dilation
        )


# PyTorch's name for the transposed-convolution base class (tools key on it with isinstance).
_ConvTranspose = _ConvTransposeNd  # the name hookgrad used before; PyTorch names the base _ConvTransposeNd


class ConvTranspose1d(_ConvTranspose):
    """1-d transposed convolution ("deconvolution") over ``[N, C_in, L]`` inputs.

    Args:
        in_channels, out_channels: channel counts.
        kernel_size, stride, padding, output_padding, dilation: ints or one-element tuples.
        groups: independent channel groups.
        bias: learn a bias.
        padding_mode: only ``"zeros"``.
        device, dtype: factory arguments.

    Weight ``[in, out/groups, K]``. ``forward(input, output_size=None)`` picks the output
    padding that gives `output_size`.

    Mirrors: ``torch.nn.ConvTranspose1d``.
    """

    _nd = 1


class ConvTranspose2d(_ConvTranspose):
    """2-d transposed convolution over ``[N, C_in, H, W]`` (or ``[C_in, H, W]``) inputs.

    Args as `ConvTranspose1d`, with ints or pairs. Weight ``[in, out/groups, KH, KW]``.

    Example:
        >>> import hookgrad as torch
        >>> up = torch.nn.ConvTranspose2d(4, 2, 3, stride=2, padding=1)
        >>> up(torch.ones(1, 4, 5, 5), output_size=[10, 10]).shape
        torch.Size([1, 2, 10, 10])

    Mirrors: ``torch.nn.ConvTranspose2d``.
    """

    _nd = 2
