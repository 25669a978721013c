"""The NNPACK switch: answers as a CPU build of PyTorch; the flag is recorded, not used.

Mirrors: ``torch.backends.nnpack``.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["is_available", "flags", "set_flags"]

_ENABLED = [True]


def is_available() -> bool:
    """True, as on PyTorch's CPU builds. Mirrors: ``torch.backends.nnpack.is_available``."""
    return True


def set_flags(_enabled: bool) -> tuple[bool]:
    """Set the flag; the previous flags. Mirrors: ``torch.backends.nnpack.set_flags``."""
    orig = (_ENABLED[0],)
    _ENABLED[0] = bool(_enabled)
    return orig


@contextmanager
def flags(enabled: bool = False) -> Iterator[None]:
    """Set the flag inside the block. Mirrors: ``torch.backends.nnpack.flags``."""
    orig = set_flags(enabled)
    try:
        yield
    finally:
        set_flags(orig[0])
