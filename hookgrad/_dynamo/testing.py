"""Backends that count and record graphs (spec compile.md §5.2).

Mirrors ``torch._dynamo.testing``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from hookgrad.compile.backends.backends import lookup_backend

__all__ = ["CompileCounter", "CompileCounterWithBackend", "EagerAndRecordGraphs"]


class CompileCounter:
    """Counts graphs handed to it (``frame_count``) and their ``call_*`` nodes (``op_count``).

    Mirrors: ``torch._dynamo.testing.CompileCounter``.
    """

    def __init__(self) -> None:
        self.frame_count = 0
        self.op_count = 0

    def __call__(self, gm: Any, example_inputs: list) -> Callable[..., Any]:
        self.frame_count += 1
        self.op_count += sum(1 for n in gm.graph.nodes if "call" in n.op)
        return gm.forward

    def clear(self) -> None:
        """Reset both counts."""
        self.frame_count = 0
        self.op_count = 0


class CompileCounterWithBackend(CompileCounter):
    """`CompileCounter` that also keeps the graphs and compiles them with a named backend.

    Mirrors: ``torch._dynamo.testing.CompileCounterWithBackend``.
    """

    def __init__(self, backend: Any) -> None:
        super().__init__()
        self.backend = backend
        self.graphs: list[Any] = []

    def __call__(self, gm: Any, example_inputs: list) -> Callable[..., Any]:
        super().__call__(gm, example_inputs)
        self.graphs.append(gm)
        return lookup_backend(self.backend)(gm, example_inputs)


class EagerAndRecordGraphs:
    """Records every graph and runs it as the ``"eager"`` backend does.

    Mirrors: ``torch._dynamo.testing.EagerAndRecordGraphs``.
    """

    def __init__(self) -> None:
        self.graphs: list[Any] = []

    def __call__(self, gm: Any, example_inputs: list) -> Callable[..., Any]:
        self.graphs.append(gm)
        return gm.forward
