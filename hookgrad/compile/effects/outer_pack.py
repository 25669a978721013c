"""Saved-tensor pack hooks entered *outside* a compiled region, watched while it is traced.

A ``saved_tensors_hooks`` context around a compiled call is the caller's: its pack hook runs
inside the graph on every call (the graph's ops save tensors through `bind`). During the trace
call it runs too, and whatever it writes (a log it appends to) would show in the region's world
diff and be replayed after the graph as if the region had written it: twice per later call. So
while a trace runs, each pack hook of the caller runs against a fresh snapshot of the region's
world; one that changed it breaks the graph (the code then runs eagerly, where the hook runs
exactly once). A pack hook without side effects (offloading, a copy) keeps the graph.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Iterator
from typing import Any

from hookgrad._config import STATE
from hookgrad.compile.effects.world import WorldSnapshot

__all__ = ["watch_outer_pack_hooks"]

_WROTE = "a saved_tensors_hooks pack hook entered outside the region wrote to the region's world"


@contextlib.contextmanager
def watch_outer_pack_hooks(trace: Any) -> Iterator[None]:
    """For the duration of `trace`'s call, wrap the caller's pack hooks (see the module)."""
    stack = STATE.saved_hooks_stack
    outer = list(stack)
    if not outer:
        yield
        return

    def watched(pack: Any) -> Any:
        @functools.wraps(pack)
        def run(t: Any) -> Any:
            snap = WorldSnapshot([trace.index])
            out = pack(t)
            if snap.diff():
                trace.graph_break(_WROTE)
            return out
        return run

    stack[:len(outer)] = [(watched(p), u) for p, u in outer]
    try:
        yield
    finally:
        stack[:len(outer)] = outer
