"""Mirrors: ``torch.backends.mps`` (Apple GPUs are not supported)."""

from __future__ import annotations

__all__ = ["is_available", "is_built"]


def is_available() -> bool:
    """Mirrors: ``torch.backends.mps.is_available``."""
    return False


def is_built() -> bool:
    """Mirrors: ``torch.backends.mps.is_built``."""
    return False
