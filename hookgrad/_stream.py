"""``torch.Stream`` and ``torch.Event`` as PyTorch's CPU build has them.

Mirrors: ``torch.Stream``, ``torch.Event``. hookgrad computes synchronously on the CPU, so the
one stream is always idle (``query()`` True, ``synchronize()`` returns at once) and an event is
always complete. PyTorch's CPU backend has no events: recording one (``Event.record``,
``Stream.record_event``, ``Stream.wait_stream``) raises its RuntimeError, as here.
"""

from __future__ import annotations

from typing import Any

from hookgrad._backend import device as _device

__all__ = ["Stream", "Event"]

_NO_EVENTS = "cpu backend doesn't support events."


def _cpu_device(device: Any) -> _device:
    dev = _device("cpu") if device is None else _device(device)
    if dev.type != "cpu":
        raise RuntimeError(f"PyTorch is not linked with support for {dev.type} devices")
    return dev


class Stream:
    """The CPU's (single, synchronous) stream. Mirrors: ``torch.Stream``."""

    def __init__(self, device: Any = None, *, priority: int = 0) -> None:
        self.device = _cpu_device(device)
        self.device_type = 0  # c10::DeviceType::CPU
        self.device_index = -1
        self.stream_id = 0

    def query(self) -> bool:
        """Whether all work on the stream is done: always (hookgrad is synchronous)."""
        return True

    def synchronize(self) -> None:
        """Wait for the stream's work: there is none pending."""

    def is_capturing(self) -> bool:
        """Graph capture never runs on the CPU."""
        return False

    def wait_event(self, event: Event) -> None:
        """Order later work after `event`: always already complete."""

    def wait_stream(self, stream: Stream) -> None:
        """Raises as PyTorch's CPU backend does (it records an event to wait on)."""
        raise RuntimeError(_NO_EVENTS)

    def record_event(self, event: Event | None = None) -> Event:
        """Raises as PyTorch's CPU backend does."""
        raise RuntimeError(_NO_EVENTS)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Stream) and other.stream_id == self.stream_id

    def __hash__(self) -> int:
        return hash((self.device_type, self.device_index, self.stream_id))

    def __repr__(self) -> str:
        return (f"torch.Stream device_type={self.device.type}, device_index={self.device_index}, "
                f"stream_id={self.stream_id}")


class Event:
    """A CPU event: always complete; recording raises. Mirrors: ``torch.Event``."""

    def __init__(self, device: Any = None, *, enable_timing: bool = False, blocking: bool = False,
                 interprocess: bool = False) -> None:
        self.device = _cpu_device(device)
        self.event_id = 0
        self._flag = int(bool(enable_timing))

    def record(self, stream: Stream | None = None) -> None:
        """Raises as PyTorch's CPU backend does."""
        raise RuntimeError(_NO_EVENTS)

    def query(self) -> bool:
        """Always complete."""
        return True

    def synchronize(self) -> None:
        """Nothing to wait for."""

    def wait(self, stream: Stream | None = None) -> None:
        """Nothing to wait for."""

    def elapsed_time(self, end_event: Event) -> float:
        """Raises ValueError unless both events time (PyTorch's check), then as ``record``."""
        if not (self._flag and end_event._flag):
            raise ValueError("Both events must be created with argument 'enable_timing=True'.")
        raise RuntimeError(_NO_EVENTS)

    def __repr__(self) -> str:
        return (f"torch.Event device_type={self.device.type}, device_index=-1, "
                f"event_flag={self._flag}, event_id={self.event_id}")
