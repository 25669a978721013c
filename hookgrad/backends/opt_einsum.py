"""Mirrors: ``torch.backends.opt_einsum`` (the opt_einsum package is not used)."""

from __future__ import annotations

__all__ = ["enabled", "strategy", "is_available"]

enabled = False
strategy = None


def is_available() -> bool:
    """Mirrors: ``torch.backends.opt_einsum.is_available``."""
    return False
