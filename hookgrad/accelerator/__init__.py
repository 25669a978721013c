"""``hookgrad.accelerator``: the device-agnostic accelerator API, with no accelerator present.

Mirrors: ``torch.accelerator`` on a CPU-only machine: ``is_available()`` is False,
``current_accelerator()`` is None, ``device_count()`` is 0, and the calls that need a device raise
PyTorch's RuntimeError.
"""

from __future__ import annotations

from typing import Any

from hookgrad.accelerator import graphs, memory
from hookgrad.accelerator.memory import (
    empty_cache,
    empty_host_cache,
    get_memory_info,
    max_memory_allocated,
    max_memory_reserved,
    memory_allocated,
    memory_reserved,
    memory_stats,
    reset_accumulated_memory_stats,
    reset_peak_memory_stats,
)
from hookgrad.accelerator.graphs import Graph
from hookgrad.accelerator._none import NO_DEVICE, no_device

__all__ = [
    "Graph", "current_accelerator", "current_device_idx", "current_device_index",
    "current_stream", "device_count", "device_index", "empty_cache", "empty_host_cache",
    "get_device_capability", "get_memory_info", "graphs", "is_available", "max_memory_allocated",
    "max_memory_reserved", "memory", "memory_allocated", "memory_reserved", "memory_stats",
    "reset_accumulated_memory_stats", "reset_peak_memory_stats", "set_device_idx",
    "set_device_index", "set_stream", "synchronize",
]


def is_available(check_fork: bool = False) -> bool:
    """Mirrors: ``torch.accelerator.is_available``."""
    return False


def current_accelerator(check_available: bool = False) -> None:
    """No accelerator: None. Mirrors: ``torch.accelerator.current_accelerator``."""
    return None


def device_count() -> int:
    """Mirrors: ``torch.accelerator.device_count``."""
    return 0


current_device_idx = current_device_index = no_device("current_device_index")
current_stream = no_device("current_stream")
synchronize = no_device("synchronize")
get_device_capability = no_device("get_device_capability")


def set_device_index(device: Any) -> None:
    """Mirrors: ``torch.accelerator.set_device_index``."""
    raise RuntimeError(NO_DEVICE)


set_device_idx = set_device_index


def set_stream(stream: Any) -> None:
    """Mirrors: ``torch.accelerator.set_stream``."""
    raise RuntimeError(NO_DEVICE)


class device_index:
    """Context manager selecting an accelerator index (``None`` is a no-op).

    Mirrors: ``torch.accelerator.device_index``.
    """

    def __init__(self, device: Any, /) -> None:
        self.idx = device

    def __enter__(self) -> None:
        if self.idx is not None:
            raise RuntimeError(NO_DEVICE)

    def __exit__(self, *exc: Any) -> bool:
        return False
