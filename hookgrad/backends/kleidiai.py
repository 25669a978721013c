"""Arm KleidiAI kernels: not part of hookgrad. Mirrors: ``torch.backends.kleidiai``."""

from __future__ import annotations

__all__ = ["is_available"]


def is_available() -> bool:
    """False. Mirrors: ``torch.backends.kleidiai.is_available``."""
    return False
