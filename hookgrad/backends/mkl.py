"""Mirrors: ``torch.backends.mkl``."""

from __future__ import annotations

from typing import Any

__all__ = ["is_available", "verbose", "VERBOSE_OFF", "VERBOSE_ON"]

VERBOSE_OFF, VERBOSE_ON = 0, 1


def is_available() -> bool:
    """Mirrors: ``torch.backends.mkl.is_available``."""
    return True


class verbose:
    """Context manager for MKL's verbose mode (nothing to log here). Mirrors: ``torch.backends.mkl.verbose``."""

    def __init__(self, enable: int) -> None:
        self.enable = enable

    def __enter__(self) -> verbose:
        return self

    def __exit__(self, *exc: Any) -> bool:
        return False
