"""Mirrors: ``torch.backends.mkldnn`` (flags settable; hookgrad computes with NumPy)."""

from __future__ import annotations

import sys
from typing import Any

from hookgrad.backends._flags import set_temporarily

__all__ = ["enabled", "deterministic", "allow_tf32", "is_available", "flags"]

enabled = True
deterministic = False
allow_tf32 = True


def is_available() -> bool:
    """True, as on PyTorch's x86 CPU builds. Mirrors: ``torch.backends.mkldnn.is_available``."""
    return True


def flags(enabled: bool = False, deterministic: bool = False, allow_tf32: bool = True,
          **kwargs: Any) -> Any:
    """Set the flags for a block. Mirrors: ``torch.backends.mkldnn.flags``."""
    return set_temporarily(sys.modules[__name__], enabled=enabled, deterministic=deterministic,
                           allow_tf32=allow_tf32)
