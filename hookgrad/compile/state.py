"""Who is tracing and which compiled call is running (the tracer's process-wide registers).

Layer 7, imports nothing from hookgrad: the interceptors, the runtime hook operators and the
public ``is_compiling`` all read these two stacks.
"""

from __future__ import annotations

from typing import Any

__all__ = ["TRACES", "RUNS", "current_trace", "current_run", "GraphBreak", "SpeculationFailed"]

TRACES: list[Any] = []  # active traces (`tracer.ActiveTrace`), innermost last
RUNS: list[Any] = []  # `recipes.RunState` of the compiled calls running, innermost last


def current_trace() -> Any:
    return TRACES[-1] if TRACES else None


def current_run() -> Any:
    return RUNS[-1] if RUNS else None


class GraphBreak(Exception):
    """Internal: the trace met something it cannot represent (spec §9.1)."""


class SpeculationFailed(Exception):
    """Internal: a speculative hook-body trace (spec §8.3) cannot be kept."""
