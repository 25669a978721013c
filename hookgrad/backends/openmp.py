"""Mirrors: ``torch.backends.openmp``."""

from __future__ import annotations

__all__ = ["is_available"]


def is_available() -> bool:
    """Mirrors: ``torch.backends.openmp.is_available``."""
    return True
