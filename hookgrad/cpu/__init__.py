"""``hookgrad.cpu``: the CPU device module (the device-generic API over the CPU).

Mirrors: ``torch.cpu``. Everything is real: one always-available device, a synchronous
stream (``synchronize`` and stream switching have nothing to wait for).
"""

from __future__ import annotations

import platform
from types import MappingProxyType
from typing import Any

__all__ = ["Event", "Stream", "StreamContext", "current_device", "current_stream", "device_count",
           "get_capabilities", "is_available", "is_initialized", "set_device", "stream",
           "synchronize"]


def is_available() -> bool:
    """Mirrors: ``torch.cpu.is_available`` (always True)."""
    return True


def is_initialized() -> bool:
    """Mirrors: ``torch.cpu.is_initialized`` (always True)."""
    return True


def device_count() -> int:
    """Mirrors: ``torch.cpu.device_count`` (always 1)."""
    return 1


def current_device() -> str:
    """Mirrors: ``torch.cpu.current_device`` (``'cpu'``)."""
    return "cpu"


def set_device(device: Any) -> None:
    """Accepted and ignored, as PyTorch's: there is one CPU device."""


def synchronize(device: Any = None) -> None:
    """Mirrors: ``torch.cpu.synchronize`` (nothing runs asynchronously)."""


def get_capabilities() -> MappingProxyType:
    """The machine's CPU description (PyTorch lists instruction-set flags; hookgrad reports
    only the architecture it knows). Mirrors: ``torch.cpu.get_capabilities``."""
    return MappingProxyType({"architecture": platform.machine()})


class Stream:
    """The CPU stream: work is always done. Mirrors: ``torch.cpu.Stream``."""

    def __init__(self, priority: int = -1) -> None:
        self.priority = priority

    def wait_stream(self, stream: Stream) -> None:
        """Nothing to wait for."""

    def record_event(self) -> None:
        """PyTorch's CPU stream records nothing and returns None."""

    def wait_event(self, event: Any) -> None:
        """Nothing to wait for."""


class Event:
    """A CPU event: recording and waiting do nothing, it is always complete.

    Mirrors: ``torch.cpu.Event`` (unlike ``torch.Event``, its ``record`` does not raise).
    """

    def query(self) -> bool:
        """Always complete."""
        return True

    def record(self, stream: Stream | None = None) -> None:
        """Nothing to record."""

    def synchronize(self) -> None:
        """Nothing to wait for."""

    def wait(self, stream: Stream | None = None) -> None:
        """Nothing to wait for."""


_CURRENT = [Stream()]


def current_stream(device: Any = None) -> Stream:
    """The (one) current stream. Mirrors: ``torch.cpu.current_stream``."""
    return _CURRENT[0]


class StreamContext:
    """Context manager selecting a stream; yields None as PyTorch's CPU one.

    Mirrors: ``torch.cpu.StreamContext``.
    """

    def __init__(self, stream: Stream | None) -> None:
        self.stream = stream
        self.prev_stream = _CURRENT[0]

    def __enter__(self) -> None:
        if self.stream is not None:
            self.prev_stream, _CURRENT[0] = _CURRENT[0], self.stream

    def __exit__(self, *exc: Any) -> None:
        if self.stream is not None:
            _CURRENT[0] = self.prev_stream


def stream(stream: Stream | None) -> StreamContext:
    """Mirrors: ``torch.cpu.stream``."""
    return StreamContext(stream)

from hookgrad.cpu import amp  # noqa: E402  (torch.cpu.amp is reachable as an attribute)
