"""Mirrors: ``torch.cuda.amp.common``."""

from __future__ import annotations

from hookgrad._backend import cuda_available

__all__ = ["amp_definitely_not_available"]


def amp_definitely_not_available() -> bool:
    """True without CUDA. Mirrors: ``torch.cuda.amp.common.amp_definitely_not_available``."""
    return not cuda_available()
