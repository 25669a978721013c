"""Process-wide switches and build facts scripts query right after ``import torch``.

Mirrors: the ``torch`` functions of the same names. hookgrad computes on NumPy on the CPU, so
the build facts are those of a CPU build of PyTorch; the precision and denormal switches are
recorded and reported (NumPy's float32 matmul is already full precision).
"""

from __future__ import annotations

import math
from typing import Any

from hookgrad import _backend, _runtime
from hookgrad._backend import device
from hookgrad._storage import TypedStorage, UntypedStorage

__all__ = [
    "e", "pi", "inf", "nan", "newaxis", "get_default_device", "set_default_device",
    "get_float32_matmul_precision", "set_float32_matmul_precision", "get_num_interop_threads",
    "set_num_interop_threads", "init_num_threads", "set_flush_denormal", "is_warn_always_enabled",
    "set_warn_always", "get_deterministic_debug_mode", "set_deterministic_debug_mode",
    "is_deterministic_algorithms_warn_only_enabled", "use_deterministic_algorithms",
    "has_lapack", "has_mkl", "has_openmp", "has_spectral", "compiled_with_cxx11_abi",
    "is_vulkan_available", "is_storage",
]

e, pi, inf, nan = math.e, math.pi, math.inf, math.nan
newaxis = None
has_lapack = has_mkl = has_openmp = has_spectral = True

_state: dict[str, Any] = {"precision": "highest", "interop": 1, "warn_always": False,
                          "warn_only": False}


def get_default_device() -> device:
    """The device factories use when none is given. Mirrors: ``torch.get_default_device``."""
    return _backend.default_device()


def set_default_device(device_: Any) -> None:
    """Make `device_` (None: ``cpu``) the factories' default (NOTE [Default device]).

    Mirrors: ``torch.set_default_device``.
    """
    dev = None if device_ is None else device(device_)
    if dev is not None:
        _backend.backend_for(dev)  # PyTorch's error for a device that is not available
    _backend.set_default_device(dev)


def get_float32_matmul_precision() -> str:
    """Mirrors: ``torch.get_float32_matmul_precision``."""
    return _state["precision"]


def set_float32_matmul_precision(precision: str) -> None:
    """Record 'highest', 'high' or 'medium'. Mirrors: ``torch.set_float32_matmul_precision``."""
    if precision not in ("highest", "high", "medium"):
        raise RuntimeError(f"Invalid precision {precision}")
    _state["precision"] = precision


def get_num_interop_threads() -> int:
    """Mirrors: ``torch.get_num_interop_threads``."""
    return _state["interop"]


def set_num_interop_threads(num: int) -> None:
    """Mirrors: ``torch.set_num_interop_threads``."""
    if not isinstance(num, int) or num <= 0:
        raise RuntimeError("Expected positive number of threads")
    _state["interop"] = num


def init_num_threads() -> None:
    """Nothing to initialise on NumPy. Mirrors: ``torch.init_num_threads``."""


def set_flush_denormal(mode: bool) -> bool:
    """Report support as an x86 CPU build does (True); NumPy keeps denormals.

    Mirrors: ``torch.set_flush_denormal``.
    """
    return True


def is_warn_always_enabled() -> bool:
    """Mirrors: ``torch.is_warn_always_enabled``."""
    return _state["warn_always"]


def set_warn_always(b: bool) -> None:
    """Mirrors: ``torch.set_warn_always``."""
    _state["warn_always"] = bool(b)


def use_deterministic_algorithms(mode: bool, *, warn_only: bool = False) -> None:
    """Record the flag and `warn_only` (hookgrad's ops are deterministic).

    Mirrors: ``torch.use_deterministic_algorithms``.
    """
    _runtime.use_deterministic_algorithms(mode, warn_only=warn_only)
    _state["warn_only"] = bool(warn_only)


def is_deterministic_algorithms_warn_only_enabled() -> bool:
    """Mirrors: ``torch.is_deterministic_algorithms_warn_only_enabled``."""
    return _state["warn_only"]


def get_deterministic_debug_mode() -> int:
    """0 off, 1 warn, 2 error. Mirrors: ``torch.get_deterministic_debug_mode``."""
    if not _runtime.are_deterministic_algorithms_enabled():
        return 0
    return 1 if _state["warn_only"] else 2


def set_deterministic_debug_mode(debug_mode: Any) -> None:
    """Accepts 0/1/2 or 'default'/'warn'/'error'. Mirrors: ``torch.set_deterministic_debug_mode``."""
    names = {"default": 0, "warn": 1, "error": 2}
    if isinstance(debug_mode, str):
        if debug_mode not in names:
            raise RuntimeError("invalid value of debug_mode, expected one of `default`, `warn`, "
                               f"`error`, but got {debug_mode}")
        debug_mode = names[debug_mode]
    if debug_mode not in (0, 1, 2):
        raise RuntimeError("invalid value of debug_mode, expected 0, 1, or 2, but got "
                           f"{debug_mode}")
    use_deterministic_algorithms(debug_mode > 0, warn_only=debug_mode == 1)


def compiled_with_cxx11_abi() -> bool:
    """Mirrors: ``torch.compiled_with_cxx11_abi``."""
    return True


def is_vulkan_available() -> bool:
    """Mirrors: ``torch.is_vulkan_available``."""
    return False


def is_storage(obj: Any) -> bool:
    """True for typed/untyped storages. Mirrors: ``torch.is_storage``."""
    return isinstance(obj, (TypedStorage, UntypedStorage))
