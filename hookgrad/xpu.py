"""``hookgrad.xpu``: Intel GPUs, answered as PyTorch's CPU-only build answers.

Mirrors: ``torch.xpu``. The availability, seeding and memory-counter API is real (no device:
``is_available()`` False, ``device_count()`` 0, counters 0, seeding a no-op, as PyTorch's
lazy seeding without a device); the entry points that need a device raise PyTorch's
``AssertionError("Torch not compiled with XPU enabled")`` (rows of `hookgrad._unsupported`).
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any


def is_available() -> bool:
    """Mirrors: ``torch.xpu.is_available`` (False: no XPU)."""
    return False


def device_count() -> int:
    """Mirrors: ``torch.xpu.device_count``."""
    return 0


def is_initialized() -> bool:
    """Mirrors: ``torch.xpu.is_initialized``."""
    return False


def is_bf16_supported(including_emulation: bool = True) -> bool:
    """Mirrors: ``torch.xpu.is_bf16_supported``."""
    return False


def is_tf32_supported() -> bool:
    """Mirrors: ``torch.xpu.is_tf32_supported``."""
    return False


def manual_seed(seed: int) -> None:
    """No device to seed. Mirrors: ``torch.xpu.manual_seed``."""


def manual_seed_all(seed: int) -> None:
    """Mirrors: ``torch.xpu.manual_seed_all``."""


def seed() -> None:
    """Mirrors: ``torch.xpu.seed``."""


def seed_all() -> None:
    """Mirrors: ``torch.xpu.seed_all``."""


def empty_cache() -> None:
    """Nothing cached. Mirrors: ``torch.xpu.empty_cache``."""


def memory_allocated(device: Any = None) -> int:
    """Mirrors: ``torch.xpu.memory_allocated``."""
    return 0


def max_memory_allocated(device: Any = None) -> int:
    """Mirrors: ``torch.xpu.max_memory_allocated``."""
    return 0


def memory_reserved(device: Any = None) -> int:
    """Mirrors: ``torch.xpu.memory_reserved``."""
    return 0


def max_memory_reserved(device: Any = None) -> int:
    """Mirrors: ``torch.xpu.max_memory_reserved``."""
    return 0


def memory_stats(device: Any = None) -> OrderedDict:
    """Mirrors: ``torch.xpu.memory_stats``."""
    return OrderedDict()


def get_rng_state_all() -> list:
    """One state per device: none. Mirrors: ``torch.xpu.get_rng_state_all``."""
    return []


def get_arch_list() -> list:
    """Mirrors: ``torch.xpu.get_arch_list``."""
    return []


def get_gencode_flags() -> str:
    """Mirrors: ``torch.xpu.get_gencode_flags``."""
    return ""
