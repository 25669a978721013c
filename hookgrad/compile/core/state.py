"""Who is tracing and which compiled call is running (the tracer's process-wide registers).

Layer 7, imports nothing from hookgrad: the interceptors, the runtime hook operators and the
public ``is_compiling`` all read these two stacks.
"""

from __future__ import annotations

import threading
from typing import Any

__all__ = ["TRACES", "RUNS", "current_trace", "current_run", "GraphBreak", "SpeculationFailed"]

class _ThreadStack(threading.local):
    """A stack per thread: the interceptions a trace installs are process-wide (class and
    module attributes), so another thread running eagerly meanwhile must see no trace."""

    def __init__(self) -> None:
        self.items: list[Any] = []

    def append(self, item: Any) -> None:
        self.items.append(item)

    def pop(self) -> Any:
        return self.items.pop()

    def __bool__(self) -> bool:
        return bool(self.items)

    def __len__(self) -> int:
        return len(self.items)

    def __getitem__(self, i: int) -> Any:
        return self.items[i]


TRACES = _ThreadStack()  # active traces (`tracer.ActiveTrace`), innermost last
RUNS = _ThreadStack()  # `recipes.RunState` of the compiled calls running, innermost last


def current_trace() -> Any:
    items = TRACES.items
    return items[-1] if items else None


def current_run() -> Any:
    items = RUNS.items
    return items[-1] if items else None


class GraphBreak(Exception):
    """Internal: the trace met something it cannot represent (spec §9.1)."""


class SpeculationFailed(Exception):
    """Internal: a speculative hook-body trace (spec §8.3) cannot be kept."""


class ImpureHook(SpeculationFailed):
    """Internal: a hook body called a C method on state the snapshot cannot see (a
    ``deque.append``): its graph would drop that effect on later calls, so the real hook is
    registered on every call instead (deferred, as under compiled autograd)."""
