"""``torch.multiprocessing``: the standard library's `multiprocessing`, re-exported.

PyTorch wraps it to move tensors through shared memory; hookgrad tensors are NumPy arrays that
pickle by value, so the plain standard-library module is the whole story. The sharing-strategy
functions are accepted for compatibility and only record the chosen name.

Mirrors: ``torch.multiprocessing``.
"""

from __future__ import annotations

import multiprocessing as _mp
from multiprocessing import *  # noqa: F403

__all__ = list(getattr(_mp, "__all__", ())) + [
    "get_sharing_strategy", "set_sharing_strategy", "get_all_sharing_strategies",
]

_STRATEGIES = ("file_descriptor", "file_system")
_strategy = ["file_descriptor"]


def get_all_sharing_strategies() -> set[str]:
    """The strategies PyTorch offers on Linux. Mirrors: ``torch.multiprocessing.get_all_sharing_strategies``."""
    return set(_STRATEGIES)


def get_sharing_strategy() -> str:
    """The recorded strategy. Mirrors: ``torch.multiprocessing.get_sharing_strategy``."""
    return _strategy[0]


def set_sharing_strategy(new_strategy: str) -> None:
    """Record `new_strategy` (no effect: see module docstring).

    Mirrors: ``torch.multiprocessing.set_sharing_strategy``.
    """
    if new_strategy not in _STRATEGIES:
        raise AssertionError(f"invalid sharing strategy {new_strategy!r}")
    _strategy[0] = new_strategy


def __getattr__(name: str) -> object:
    # Names the standard module defines lazily (its context attributes) resolve through it.
    return getattr(_mp, name)
