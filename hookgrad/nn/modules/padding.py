"""Padding layers: constant, zero, reflection, replication and circular padding in 1 to 3 dims.

Each stores its padding as PyTorch does (an int expands to a tuple of ``2 * n`` amounts, last
dim first) and forwards to `hookgrad.nn.functional.pad`. Mirrors: ``torch.nn.modules.padding``.
"""

from __future__ import annotations

from typing import Any

from hookgrad._tensor import Tensor
from hookgrad.nn import functional as F
from hookgrad.nn.modules.module import Module

__all__ = [
    "ConstantPad1d", "ConstantPad2d", "ConstantPad3d", "ZeroPad1d", "ZeroPad2d", "ZeroPad3d",
    "ReflectionPad1d", "ReflectionPad2d", "ReflectionPad3d", "ReplicationPad1d",
    "ReplicationPad2d", "ReplicationPad3d", "CircularPad1d", "CircularPad2d", "CircularPad3d",
]


def _amounts(padding: Any, n: int) -> tuple[int, ...]:
    if isinstance(padding, int):
        return (padding,) * (2 * n)
    return tuple(padding)


class _PadNd(Module):
    """Shared state and forward: ``F.pad(input, self.padding, self._mode)``."""

    __constants__ = ["padding"]
    _mode = "constant"
    _nd = 1

    def __init__(self, padding: Any) -> None:
        super().__init__()
        self.padding = _amounts(padding, self._nd)

    def forward(self, input: Tensor) -> Tensor:
        return F.pad(input, self.padding, self._mode)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class _ConstantPadNd(_PadNd):
    """Mirrors: ``torch.nn.modules.padding._ConstantPadNd``."""

    __constants__ = ["padding", "value"]

    def __init__(self, padding: Any, value: float) -> None:
        super().__init__(padding)
        self.value = value

    def forward(self, input: Tensor) -> Tensor:
        return F.pad(input, self.padding, "constant", self.value)

    def extra_repr(self) -> str:
        return f"padding={self.padding}, value={self.value}"


class ConstantPad1d(_ConstantPadNd):
    """Pad the last dim with a constant.

    Example:
        >>> import hookgrad as torch
        >>> torch.nn.ConstantPad1d(1, 3.5)(torch.zeros(1, 2)).tolist()
        [[3.5, 0.0, 0.0, 3.5]]

    Mirrors: ``torch.nn.ConstantPad1d``.
    """

    _nd = 1


class ConstantPad2d(_ConstantPadNd):
    """Pad the last two dims with a constant. Mirrors: ``torch.nn.ConstantPad2d``."""

    _nd = 2


class ConstantPad3d(_ConstantPadNd):
    """Pad the last three dims with a constant. Mirrors: ``torch.nn.ConstantPad3d``."""

    _nd = 3


class ZeroPad1d(ConstantPad1d):
    """Pad the last dim with zeros. Mirrors: ``torch.nn.ZeroPad1d``."""

    def __init__(self, padding: Any) -> None:
        super().__init__(padding, 0.0)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class ZeroPad2d(ConstantPad2d):
    """Pad the last two dims with zeros.

    Example:
        >>> import hookgrad as torch
        >>> torch.nn.ZeroPad2d((1, 0, 0, 1))(torch.ones(1, 1, 1)).tolist()
        [[[0.0, 1.0], [0.0, 0.0]]]

    Mirrors: ``torch.nn.ZeroPad2d``.
    """

    def __init__(self, padding: Any) -> None:
        super().__init__(padding, 0.0)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class ZeroPad3d(ConstantPad3d):
    """Pad the last three dims with zeros. Mirrors: ``torch.nn.ZeroPad3d``."""

    def __init__(self, padding: Any) -> None:
        super().__init__(padding, 0.0)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class _ReflectionPadNd(_PadNd):
    """Mirrors: ``torch.nn.modules.padding._ReflectionPadNd``."""

    _mode = "reflect"


class ReflectionPad1d(_ReflectionPadNd):
    """Pad the last dim with its reflection. Mirrors: ``torch.nn.ReflectionPad1d``."""

    _nd = 1


class ReflectionPad2d(_ReflectionPadNd):
    """Pad the last two dims with their reflection. Mirrors: ``torch.nn.ReflectionPad2d``."""

    _nd = 2


class ReflectionPad3d(_ReflectionPadNd):
    """Pad the last three dims with their reflection. Mirrors: ``torch.nn.ReflectionPad3d``."""

    _nd = 3


class _ReplicationPadNd(_PadNd):
    """Mirrors: ``torch.nn.modules.padding._ReplicationPadNd``."""

    _mode = "replicate"


class ReplicationPad1d(_ReplicationPadNd):
    """Pad the last dim by repeating its edge. Mirrors: ``torch.nn.ReplicationPad1d``."""

    _nd = 1


class ReplicationPad2d(_ReplicationPadNd):
    """Pad the last two dims by repeating edges. Mirrors: ``torch.nn.ReplicationPad2d``."""

    _nd = 2


class ReplicationPad3d(_ReplicationPadNd):
    """Pad the last three dims by repeating edges. Mirrors: ``torch.nn.ReplicationPad3d``."""

    _nd = 3


class _CircularPadNd(_PadNd):
    """Mirrors: ``torch.nn.modules.padding._CircularPadNd``."""

    _mode = "circular"

    def forward(self, input: Tensor) -> Tensor:
        n = self._nd
        if input.dim() not in (n + 1, n + 2):
            raise ValueError(f"expected {n + 1}D or {n + 2}D input (got {input.dim()}D input)")
        return F.pad(input, self.padding, "circular")


class CircularPad1d(_CircularPadNd):
    """Pad the last dim by wrapping around. Mirrors: ``torch.nn.CircularPad1d``."""

    _nd = 1


class CircularPad2d(_CircularPadNd):
    """Pad the last two dims by wrapping around. Mirrors: ``torch.nn.CircularPad2d``."""

    _nd = 2


class CircularPad3d(_CircularPadNd):
    """Pad the last three dims by wrapping around. Mirrors: ``torch.nn.CircularPad3d``."""

    _nd = 3
