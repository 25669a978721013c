"""Mirrors: ``torch.cuda.amp.autocast_mode`` (deprecated spellings of ``hookgrad.amp``)."""

from __future__ import annotations

import warnings
from typing import Any, Callable

from hookgrad.amp import autocast_mode as _amp

__all__ = ["autocast", "custom_fwd", "custom_bwd"]


class autocast(_amp.autocast):
    """``autocast("cuda", ...)``. Mirrors: ``torch.cuda.amp.autocast``."""

    def __init__(self, enabled: bool = True, dtype: Any = None, cache_enabled: bool = True) -> None:
        warnings.warn("`torch.cuda.amp.autocast(args...)` is deprecated. Please use "
                      "`torch.amp.autocast('cuda', args...)` instead.", FutureWarning,
                      stacklevel=2)
        super().__init__("cuda", dtype=dtype, enabled=enabled, cache_enabled=cache_enabled)


def custom_fwd(fwd: Callable | None = None, *, cast_inputs: Any = None) -> Any:
    """Mirrors: ``torch.cuda.amp.custom_fwd``."""
    warnings.warn("`torch.cuda.amp.custom_fwd(args...)` is deprecated. Please use "
                  "`torch.amp.custom_fwd(args..., device_type='cuda')` instead.", FutureWarning,
                  stacklevel=2)
    return _amp.custom_fwd(fwd, device_type="cuda", cast_inputs=cast_inputs)


def custom_bwd(bwd: Callable | None = None) -> Any:
    """Mirrors: ``torch.cuda.amp.custom_bwd``."""
    warnings.warn("`torch.cuda.amp.custom_bwd(args...)` is deprecated. Please use "
                  "`torch.amp.custom_bwd(args..., device_type='cuda')` instead.", FutureWarning,
                  stacklevel=2)
    return _amp.custom_bwd(bwd, device_type="cuda")


