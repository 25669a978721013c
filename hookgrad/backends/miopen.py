"""Mirrors: ``torch.backends.miopen`` (AMD's MIOpen; the flag is settable and unused)."""

from __future__ import annotations

import contextlib
import sys
from typing import Any, Iterator

__all__ = ["immediate", "set_flags", "flags"]

immediate = False


def set_flags(_immediate: bool | None = None) -> tuple:
    """Set the flag, returning the previous value. Mirrors: ``torch.backends.miopen.set_flags``."""
    mod = sys.modules[__name__]
    orig = (mod.immediate,)
    if _immediate is not None:
        mod.immediate = bool(_immediate)
    return orig


@contextlib.contextmanager
def flags(immediate: bool = False) -> Iterator[Any]:  # noqa: A002 - torch's name
    """Set the flag for a block. Mirrors: ``torch.backends.miopen.flags``."""
    orig = set_flags(immediate)
    try:
        yield
    finally:
        set_flags(*orig)
