"""Mirrors: ``torch.backends.cudnn`` on a CPU build (flags settable, cuDNN never used)."""

from __future__ import annotations

import sys
from typing import Any

from hookgrad.backends._flags import set_temporarily

__all__ = ["enabled", "benchmark", "deterministic", "allow_tf32", "benchmark_limit",
           "is_available", "version", "flags"]

enabled = True
benchmark = False
deterministic = False
allow_tf32 = True
benchmark_limit = 10


def is_available() -> bool:
    """Mirrors: ``torch.backends.cudnn.is_available``."""
    return False


def version() -> None:
    """No cuDNN library is linked. Mirrors: ``torch.backends.cudnn.version``."""
    return None


def flags(enabled: bool = False, benchmark: bool = False, benchmark_limit: int = 10,
          deterministic: bool = False, allow_tf32: bool = True, **kwargs: Any) -> Any:
    """Set the flags for a block. Mirrors: ``torch.backends.cudnn.flags``."""
    return set_temporarily(sys.modules[__name__], enabled=enabled, benchmark=benchmark,
                           benchmark_limit=benchmark_limit, deterministic=deterministic,
                           allow_tf32=allow_tf32)
