"""``hookgrad.mps``: Apple GPUs, answered as PyTorch's build without MPS answers.

Mirrors: ``torch.mps``. ``is_available()`` False, ``device_count()`` 0, ``manual_seed`` a no-op;
the entry points that need the device raise PyTorch's ``RuntimeError("Cannot execute ...()
without MPS backend.")`` (rows of `hookgrad._unsupported`).
"""

from __future__ import annotations

__all__ = ["is_available", "device_count", "manual_seed"]


def is_available() -> bool:
    """Mirrors: ``torch.mps.is_available``."""
    return False


def device_count() -> int:
    """Mirrors: ``torch.mps.device_count``."""
    return 0


def manual_seed(seed: int) -> None:
    """No device to seed. Mirrors: ``torch.mps.manual_seed``."""
