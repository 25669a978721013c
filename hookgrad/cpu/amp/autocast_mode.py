"""Mirrors: ``torch.cpu.amp.autocast_mode`` (the deprecated spelling of ``autocast("cpu")``)."""

from __future__ import annotations

import warnings
from typing import Any

from hookgrad._legacy import bfloat16
from hookgrad.amp import autocast_mode as _amp

__all__ = ["autocast"]


class autocast(_amp.autocast):
    """``autocast("cpu", ...)`` (bfloat16 by default). Mirrors: ``torch.cpu.amp.autocast``."""

    def __init__(self, enabled: bool = True, dtype: Any = bfloat16,
                 cache_enabled: bool = True) -> None:
        warnings.warn("`torch.cpu.amp.autocast(args...)` is deprecated. Please use "
                      "`torch.amp.autocast('cpu', args...)` instead.", FutureWarning,
                      stacklevel=2)
        super().__init__("cpu", dtype=dtype, enabled=enabled, cache_enabled=cache_enabled)
