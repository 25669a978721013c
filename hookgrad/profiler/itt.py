"""Intel ITT annotations (ranges and marks shown by VTune). Mirrors: ``torch.profiler.itt``.

PyTorch's CPU build has ITT compiled in: the calls succeed and return None, and only an attached
VTune session records them. hookgrad has no VTune hook-up, so the calls are accepted and
recorded nowhere, which is what PyTorch does when no collector is attached.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["is_available", "range_push", "range_pop", "mark", "range"]


def is_available() -> bool:
    """Mirrors: ``torch.profiler.itt.is_available`` (True in PyTorch's CPU build)."""
    return True


def range_push(msg: str) -> None:
    """Open a named range. Mirrors: ``torch.profiler.itt.range_push``."""
    if not isinstance(msg, str):
        raise TypeError(f"rangePush(): argument 'msg' must be str, not {type(msg).__name__}")


def range_pop() -> None:
    """Close the innermost range. Mirrors: ``torch.profiler.itt.range_pop``."""


def mark(msg: str) -> None:
    """An instantaneous event. Mirrors: ``torch.profiler.itt.mark``."""
    if not isinstance(msg, str):
        raise TypeError(f"mark(): argument 'msg' must be str, not {type(msg).__name__}")


@contextmanager
def range(msg: str, *args: object, **kwargs: object) -> Iterator[None]:  # noqa: A001
    """``range_push(msg.format(...))`` on entry, ``range_pop()`` on exit.
    Mirrors: ``torch.profiler.itt.range``."""
    range_push(msg.format(*args, **kwargs))
    try:
        yield
    finally:
        range_pop()
