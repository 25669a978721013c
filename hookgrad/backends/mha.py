"""Switch for the fused multi-head-attention fast path (a recorded flag: hookgrad has one path).

Mirrors: ``torch.backends.mha``.
"""

from __future__ import annotations

__all__ = ["get_fastpath_enabled", "set_fastpath_enabled"]

_is_fastpath_enabled: bool = True


def get_fastpath_enabled() -> bool:
    """Whether the fast path may be used (default True). Mirrors: ``get_fastpath_enabled``."""
    return _is_fastpath_enabled


def set_fastpath_enabled(value: bool) -> None:
    """Record whether the fast path may be used. Mirrors: ``set_fastpath_enabled``."""
    global _is_fastpath_enabled
    _is_fastpath_enabled = value
