"""``torch.random``: seeding and RNG state, plus `fork_rng`.

Example:
    >>> import hookgrad as torch
    >>> with torch.random.fork_rng():
    ...     _ = torch.rand(3)  # draws here do not advance the outer stream
    >>> isinstance(torch.random.initial_seed(), int)
    True

Mirrors: ``torch.random``.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from hookgrad._functional.random import (
    get_rng_state,
    initial_seed,
    manual_seed,
    seed,
    set_rng_state,
)

__all__ = ["manual_seed", "seed", "initial_seed", "get_rng_state", "set_rng_state", "fork_rng"]


@contextmanager
def fork_rng(devices: Any = None, enabled: bool = True, _caller: str = "fork_rng",
             _devices_kw: str = "devices", device_type: str = "cuda") -> Iterator[None]:
    """Restore the CPU generator's state on exit. Mirrors: ``torch.random.fork_rng``."""
    if not enabled:
        yield
        return
    state = get_rng_state()
    try:
        yield
    finally:
        set_rng_state(state)
