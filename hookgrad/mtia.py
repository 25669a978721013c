"""``hookgrad.mtia``: Meta's training accelerator, answered as PyTorch's CPU-only build answers.

Mirrors: ``torch.mtia``. Availability, seeding and memory counters are real (no device); device
entry points raise PyTorch's errors (rows of `hookgrad._unsupported`). ``Stream``/``Event`` are
``torch.Stream``/``torch.Event``, as in PyTorch.
"""

from __future__ import annotations

from typing import Any

from hookgrad._stream import Event, Stream

__all__ = ["Event", "Stream", "is_available", "device_count", "is_initialized"]


def is_available() -> bool:
    """Mirrors: ``torch.mtia.is_available`` (False: no MTIA)."""
    return False


def device_count() -> int:
    """Mirrors: ``torch.mtia.device_count``."""
    return 0


def is_initialized() -> bool:
    """Mirrors: ``torch.mtia.is_initialized``."""
    return False


def is_bf16_supported(including_emulation: bool = True) -> bool:
    """Mirrors: ``torch.mtia.is_bf16_supported`` (True in PyTorch's CPU build too)."""
    return True


def manual_seed(seed: int) -> None:
    """Mirrors: ``torch.mtia.manual_seed``."""


def manual_seed_all(seed: int) -> None:
    """Mirrors: ``torch.mtia.manual_seed_all``."""


def seed() -> None:
    """Mirrors: ``torch.mtia.seed``."""


def seed_all() -> None:
    """Mirrors: ``torch.mtia.seed_all``."""


def memory_allocated(device: Any = None) -> int:
    """Mirrors: ``torch.mtia.memory_allocated``."""
    return 0


def max_memory_allocated(device: Any = None) -> int:
    """Mirrors: ``torch.mtia.max_memory_allocated``."""
    return 0


def memory_stats(device: Any = None) -> dict:
    """Mirrors: ``torch.mtia.memory_stats``."""
    return {}


def get_rng_state_all() -> list:
    """Mirrors: ``torch.mtia.get_rng_state_all``."""
    return []
