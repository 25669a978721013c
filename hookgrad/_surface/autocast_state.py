"""The ``torch.*autocast*`` state functions, over `hookgrad.amp.autocast_mode.STATE`.

Mirrors: ``torch.is_autocast_enabled``, ``torch.set_autocast_enabled``,
``torch.get_autocast_dtype`` and their per-device legacy spellings.
"""

from __future__ import annotations

from typing import Any

from hookgrad.amp import _cpu_policy
from hookgrad.amp.autocast_mode import STATE, set_enabled, sync_cpu

__all__ = [
    "is_autocast_enabled", "set_autocast_enabled", "get_autocast_dtype", "set_autocast_dtype",
    "is_autocast_cpu_enabled", "set_autocast_cpu_enabled", "get_autocast_cpu_dtype",
    "set_autocast_cpu_dtype", "get_autocast_gpu_dtype", "set_autocast_gpu_dtype",
    "is_autocast_ipu_enabled", "set_autocast_ipu_enabled", "get_autocast_ipu_dtype",
    "set_autocast_ipu_dtype", "is_autocast_xla_enabled", "set_autocast_xla_enabled",
    "get_autocast_xla_dtype", "set_autocast_xla_dtype", "clear_autocast_cache",
    "is_autocast_cache_enabled", "set_autocast_cache_enabled", "autocast_increment_nesting",
    "autocast_decrement_nesting",
]


def is_autocast_enabled(device_type: str = "cuda") -> bool:
    """Mirrors: ``torch.is_autocast_enabled``."""
    return STATE["enabled"].get(device_type, False)


def set_autocast_enabled(device_type: Any, enabled: Any = None) -> None:
    """``(device_type, enabled)`` or the legacy ``(enabled)`` for CUDA. Mirrors: ``torch.set_autocast_enabled``."""
    if enabled is None:
        device_type, enabled = "cuda", device_type
    set_enabled(device_type, enabled)


def get_autocast_dtype(device_type: str) -> Any:
    """Mirrors: ``torch.get_autocast_dtype``."""
    return STATE["dtype"][device_type]


def set_autocast_dtype(device_type: str, dtype: Any) -> None:
    """Mirrors: ``torch.set_autocast_dtype``."""
    STATE["dtype"][device_type] = dtype
    sync_cpu()


def _device(dev: str) -> tuple:
    def is_enabled() -> bool:
        return is_autocast_enabled(dev)

    def set_on(enabled: bool) -> None:
        set_enabled(dev, enabled)

    def get_dtype() -> Any:
        return get_autocast_dtype(dev)

    def set_dtype(dtype: Any) -> None:
        set_autocast_dtype(dev, dtype)
    for fn, name in ((is_enabled, f"is_autocast_{dev}_enabled"),
                     (set_on, f"set_autocast_{dev}_enabled"),
                     (get_dtype, f"get_autocast_{dev}_dtype"),
                     (set_dtype, f"set_autocast_{dev}_dtype")):
        fn.__name__ = name
        fn.__doc__ = f"Mirrors: ``torch.{name}``."
    return is_enabled, set_on, get_dtype, set_dtype


(is_autocast_cpu_enabled, set_autocast_cpu_enabled, get_autocast_cpu_dtype,
 set_autocast_cpu_dtype) = _device("cpu")
(is_autocast_ipu_enabled, set_autocast_ipu_enabled, get_autocast_ipu_dtype,
 set_autocast_ipu_dtype) = _device("ipu")
(is_autocast_xla_enabled, set_autocast_xla_enabled, get_autocast_xla_dtype,
 set_autocast_xla_dtype) = _device("xla")
_, _, get_autocast_gpu_dtype, set_autocast_gpu_dtype = _device("cuda")


def clear_autocast_cache() -> None:
    """Drop CPU autocast's cached casts. Mirrors: ``torch.clear_autocast_cache``."""
    _cpu_policy.clear_cache()


def is_autocast_cache_enabled() -> bool:
    """Mirrors: ``torch.is_autocast_cache_enabled``."""
    return STATE["cache"]


def set_autocast_cache_enabled(enabled: bool) -> None:
    """Mirrors: ``torch.set_autocast_cache_enabled``."""
    STATE["cache"] = bool(enabled)
    sync_cpu()


def autocast_increment_nesting() -> int:
    """Mirrors: ``torch.autocast_increment_nesting``."""
    STATE["nesting"] += 1
    return STATE["nesting"]


def autocast_decrement_nesting() -> int:
    """Mirrors: ``torch.autocast_decrement_nesting``."""
    STATE["nesting"] -= 1
    return STATE["nesting"]
