"""``explain(fn)(*args)``: what compiling `fn` produces (graphs, ops, guards, breaks, hooks)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from hookgrad.compile import api
from hookgrad.compile.counters import counters
from hookgrad.compile.frame import CACHES

__all__ = ["explain", "ExplainOutput"]


@dataclass
class ExplainOutput:
    """The result of `explain`.

    Mirrors: ``torch._dynamo.backends.debugging.ExplainOutput``.
    """

    graphs: list = field(default_factory=list)
    graph_count: int = 0
    graph_break_count: int = 0
    break_reasons: list = field(default_factory=list)
    op_count: int = 0
    guards: list = field(default_factory=list)
    hooks: list = field(default_factory=list)  # (node name, "inlined" | "deferred")
    side_effects: list = field(default_factory=list)

    def __str__(self) -> str:
        lines = [f"Graph Count: {self.graph_count}", f"Graph Break Count: "
                 f"{self.graph_break_count}", f"Op Count: {self.op_count}"]
        lines += [f"Break Reason: {r}" for r in self.break_reasons]
        lines += [f"Hook: {n} -> {where}" for n, where in self.hooks]
        lines += [f"Side effect: {e!r}" for e in self.side_effects]
        lines += [f"Guard: {g}" for g in self.guards]
        return "\n".join(lines)


def explain(fn: Callable[..., Any]) -> Callable[..., ExplainOutput]:
    """Trace `fn` once with fresh caches and report what the compiler made of it.

    Mirrors: ``torch._dynamo.explain``.
    """
    def run(*args: Any, **kwargs: Any) -> ExplainOutput:
        out = ExplainOutput()

        def backend(gm: Any, example_inputs: list) -> Any:
            out.graphs.append(gm)
            return gm.forward
        opt = api.compile(fn, backend=backend)
        target = opt.__dict__["_hookgrad_compiled"] if isinstance(opt, api.OptimizedModule) \
            else opt
        saved = CACHES.pop(target.key, None)
        before = dict(counters["graph_break"])
        try:
            opt(*args, **kwargs)
            entries = CACHES.get(target.key, [])
        finally:
            if saved is not None:
                CACHES[target.key] = saved
            else:
                CACHES.pop(target.key, None)
        for reason, n in counters["graph_break"].items():
            if n > before.get(reason, 0):
                out.break_reasons.append(reason)
        out.graph_count = len(out.graphs)
        out.graph_break_count = len(out.break_reasons)
        out.op_count = sum(gm.graph.op_count() for gm in out.graphs)
        for entry in entries:
            out.guards += [desc for _c, desc in entry.guards.guards]
            out.side_effects += list(entry.effects)
            if entry.gm is not None:
                out.hooks += [(n.name, n.meta["hook"]) for n in entry.gm.graph.nodes
                              if "hook" in n.meta]
        return out
    return run
