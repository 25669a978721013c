"""``explain(fn)(*args)``: what compiling `fn` produces (graphs, ops, guards, breaks, hooks)."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from hookgrad.compile import api
from hookgrad.compile.backends.backends import internal
from hookgrad.compile.core.counters import counters
from hookgrad.compile.core.dynamic import FRAME_STATES
from hookgrad.compile.core.graph import op_count
from hookgrad.compile.cache.frame import CACHES

__all__ = ["explain", "ExplainOutput", "BreakReason", "OutGuard"]


class BreakReason(str):
    """A graph-break reason: the message itself, plus PyTorch's ``.reason``/``.user_stack``.

    Mirrors: ``torch._dynamo.output_graph.GraphCompileReason``.
    """

    @property
    def reason(self) -> str:
        return str(self)

    @property
    def user_stack(self) -> list:
        return []  # hookgrad breaks whole calls (spec §9.2): no resume point to point at


@dataclass
class OutGuard:
    """One guard of the compiled entry, as ``explain`` lists it.

    Mirrors: ``torch._guards.Guard`` (``name`` is the source, ``code_list`` the check).
    """

    name: str
    code_list: list

    def __str__(self) -> str:
        return f"Guard(name={self.name!r}, code={self.code_list[0]!r})"


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
    ops_per_graph: list = field(default_factory=list)  # each graph's node targets
    out_guards: list = field(default_factory=list)  # `OutGuard`s
    compile_times: str = ""

    def __str__(self) -> str:
        lines = [f"Graph Count: {self.graph_count}", f"Graph Break Count: "
                 f"{self.graph_break_count}", f"Op Count: {self.op_count}"]
        lines += [f"Break Reason: {r}" for r in self.break_reasons]
        for i, ops in enumerate(self.ops_per_graph):
            lines.append(f"Ops {i + 1}: " + ", ".join(getattr(op, "__name__", str(op))
                                                      for op in ops))
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

        @internal  # explain reports the primitive-level graph (its primitives and hook nodes)
        def backend(gm: Any, example_inputs: list) -> Any:
            out.graphs.append(gm)
            return gm.forward
        opt = api.compile(fn, backend=backend)
        target = opt.__dict__["_hookgrad_compiled"] if isinstance(opt, api.OptimizedModule) \
            else opt
        saved = CACHES.pop(target.key, None)
        saved_state = FRAME_STATES.pop(target.key, None)  # explaining is not a compile
        before = dict(counters["graph_break"])
        start = time.perf_counter()
        try:
            opt(*args, **kwargs)
            entries = CACHES.get(target.key, [])
        finally:
            out.compile_times = f"trace and compile: {time.perf_counter() - start:.4f} s"
            _put_back(CACHES, target.key, saved)
            _put_back(FRAME_STATES, target.key, saved_state)
        for reason, n in counters["graph_break"].items():
            if n > before.get(reason, 0):
                out.break_reasons.append(BreakReason(reason))
        out.graph_count = len(out.graphs)
        out.graph_break_count = len(out.break_reasons)
        out.op_count = sum(op_count(gm.graph) for gm in out.graphs)
        out.ops_per_graph = [[n.target for n in gm.graph.nodes if "call" in n.op]
                             for gm in out.graphs]
        for entry in entries:
            out.guards += [desc for _c, desc in entry.guards.guards]
            out.out_guards += [OutGuard(desc.split(" ")[1] if desc.startswith("TENSOR_MATCH")
                                        else desc.split(" ")[0], [desc])
                               for _c, desc in entry.guards.guards]
            out.side_effects += list(entry.effects)
            if entry.gm is not None:
                out.hooks += [(n.name, n.meta["hook"]) for n in entry.gm.graph.nodes
                              if "hook" in n.meta]
        return out
    return run


def _put_back(table: dict, key: Any, saved: Any) -> None:
    if saved is not None:
        table[key] = saved
    else:
        table.pop(key, None)
