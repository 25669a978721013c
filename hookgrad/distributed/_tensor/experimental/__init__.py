"""DTensor's experimental helpers.

Mirrors: ``torch.distributed._tensor.experimental``. `implicit_replication` lets DTensor
operators treat plain tensors as replicated; hookgrad has no DTensor, so every tensor already is
a plain one and the context only records that it is active (`is_implicit_replication`).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["implicit_replication"]

_DEPTH = [0]


@contextmanager
def implicit_replication() -> Iterator[None]:
    """Treat plain tensors as replicated DTensors inside the block.

    Example:
        >>> with implicit_replication():
        ...     is_implicit_replication()
        True

    Mirrors: ``torch.distributed._tensor.experimental.implicit_replication``.
    """
    _DEPTH[0] += 1
    try:
        yield
    finally:
        _DEPTH[0] -= 1


def is_implicit_replication() -> bool:
    """Whether an `implicit_replication` block is active (hookgrad helper)."""
    return _DEPTH[0] > 0
