"""The trace: run the entry once on the call's real values while recording (spec §3.1).

NOTE [Execution tracing]
hookgrad traces by *executing*: the first call of a code key runs the user's function for real
(so that call is, by construction, exactly the eager call) with a `TraceRecorder` on `bind`, the
interceptors of `intercept` installed and a profile hook collecting the Python functions called
(their ``__code__`` is guarded, spec §6.1). A graph break stops the recording but not the call:
the function finishes eagerly, and the cache stores an eager entry (spec §9.2); under
``fullgraph=True`` the world is rolled back (snapshot, hooks registered in the region removed)
and `Unsupported` is raised. Later calls run the graph and replay the side-effect log.
"""

from __future__ import annotations

import sys
from typing import Any

from hookgrad._config import add_recorder, remove_recorder
from hookgrad._tensor import Tensor
from hookgrad.compile.trace import hops
from hookgrad.compile.trace import intercept
from hookgrad.compile.trace import module_hooks
from hookgrad.compile.trace import symtrace
from hookgrad.compile.trace import user_calls
from hookgrad.compile.effects.attr_reads import AttrReads
from hookgrad.compile.trace import calls, patches
from hookgrad.compile.core.dynamic import DynamicPlan
from hookgrad.compile.effects.effects import HandleRemove, TensorHook
from hookgrad.compile.core.graph import Graph, GraphModule
from hookgrad.compile.effects.recipes import FromSource
from hookgrad.compile.trace.recorder import TraceRecorder
from hookgrad.compile.core.sources import CallContext, SourceIndex
from hookgrad.compile.trace.speculate import speculate_hook
from hookgrad.compile.core.state import TRACES, ImpureHook, SpeculationFailed
from hookgrad.compile.trace.symtrace import SymTrace
from hookgrad.compile.effects.world import WorldSnapshot
from hookgrad.hooktools.compiled import note_compiled_hook

__all__ = ["ActiveTrace"]


class ActiveTrace:
    """State of one running trace: graph, side-effect log, handle slots, break reason."""

    def __init__(self, fn: Any, ctx: CallContext, *, ca: bool, lenient: bool = False,
                 plan: DynamicPlan | None = None) -> None:
        self.fn = fn
        self.ctx = ctx
        self.ca = ca  # compiled autograd on: intermediate hooks are deferred (spec §8.4)
        self.index = SourceIndex(fn, ctx.args)
        self.snapshot = WorldSnapshot([self.index])
        self.graph = Graph()
        self.rec = TraceRecorder(self.graph, self.index)
        self.rec.lenient = lenient
        self.rec.on_break = self.graph_break
        self.sub: list[TraceRecorder] = []  # speculative hook traces, innermost last
        self.break_reason: str | None = None
        self.break_line: int | None = None  # the region's own line at the break (`resume`)
        self.effects: list[Any] = []
        self.handle_slots: dict[int, int] = {}
        self.hop_slots: set[int] = set()
        self.real_handles: list[Any] = []  # registrations made in the region (rollback)
        self.deferred_hooks: list[Any] = []
        self.submodules: dict[str, GraphModule] = {}
        self.called_codes: set[Any] = set()
        self.object_sources: list[Any] = []  # modules the backward-hook operators need
        self._bw_slots: dict[int, int] = {}
        self.keep_alive: list[Any] = []
        self._old_profile: Any = None
        # dynamic shapes (spec §6.3, NOTE [Dynamic traces] in `symtrace`)
        self.plan = plan if plan is not None else DynamicPlan()
        self.sym: SymTrace | None = SymTrace(self, self.plan) if self.plan else None
        self.sym_guards: list[tuple[Any, str]] = []
        self.seen_hooks: list[Any] = []
        # attributes of pre-existing objects the region read (NOTE [Attribute reads])
        self.attr_reads: AttrReads | None = None if lenient else AttrReads(self.index)

    def add_sym_guard(self, check: Any, desc: str) -> None:
        """A specialisation of a symbolic size or scalar (`symbolic._specialise`)."""
        self.sym_guards.append((check, desc))

    @property
    def recording(self) -> bool:
        return self.break_reason is None

    def active_recorder(self) -> TraceRecorder:
        return self.sub[-1] if self.sub else self.rec

    # -------------------------------------------------------------- running
    def run(self, args: tuple, kwargs: dict) -> Any:
        TRACES.append(self)
        groups = [intercept.GROUP, calls.GROUP]
        if self.sym is not None:
            groups.append(symtrace.GROUP)
        else:  # last: it leaves the names above to their groups (NOTE in `user_calls`)
            groups.append(user_calls.GROUP)
        patches.install(groups)
        if self.sym is not None:
            args, kwargs = symtrace.sym_arguments(self.sym, self.fn, args, kwargs)
        if self.attr_reads is not None:
            self.attr_reads.install()
        add_recorder(self.rec)
        self._old_profile = sys.getprofile()
        sys.setprofile(self._profile)
        try:
            return self.fn(*args, **kwargs)
        finally:
            sys.setprofile(self._old_profile)
            remove_recorder(self.rec)
            if self.attr_reads is not None:
                self.attr_reads.uninstall()
            patches.uninstall()
            TRACES.pop()

    def _profile(self, frame: Any, event: str, arg: Any) -> None:
        if event == "call":
            self.called_codes.add(frame.f_code)

    def graph_break(self, reason: str) -> None:
        """Stop recording (the call goes on eagerly); inside a speculation, fail it instead."""
        if self.sub:
            raise SpeculationFailed(reason)
        if self.break_reason is None:
            self.break_reason = reason
            remove_recorder(self.rec)
            frame, code = sys._getframe(1), getattr(self.fn, "__code__", None)
            # the outermost frame of the region's code below this trace's `run`
            while frame is not None and frame.f_code is not ActiveTrace.run.__code__:
                if frame.f_code is code:
                    self.break_line = frame.f_lineno
                frame = frame.f_back

    def rollback(self) -> None:
        """Undo what the region did to pre-existing state (fullgraph failure)."""
        for handle in self.real_handles:
            handle.remove()
        self.snapshot.restore()

    # -------------------------------------------------------------- hooks (spec §7.1, §8)
    def _new_slot(self, handle: Any) -> int:
        slot = len(self.handle_slots)
        self.handle_slots[id(handle)] = slot
        self.real_handles.append(handle)
        return slot

    def on_register(self, t: Tensor, hook: Any, kind: str, real: Any) -> Any:
        self.seen_hooks.append(hook)  # (a dynamic trace makes their closures plain afterwards)
        if self.rec.is_intermediate(t):
            if kind != "register_hook":
                return real(t, hook)  # the eager error for a non-leaf
            if self.ca:
                return self._register_deferred(t, hook, kind, real)
            return self._register_traced(t, hook, real)
        source = self.index.source_of(t)
        if source is None:
            self.graph_break("hook registered on a tensor the tracer cannot source")
            self._note(hook, "graph_break", "hook registered on a tensor the tracer cannot "
                       "source")
            return real(t, hook)
        handle = real(t, hook)
        self.effects.append(TensorHook(FromSource(source), kind, hook, self._new_slot(handle)))
        self._note(hook, "eager", f"hook on {source}: its registration is replayed after the "
                   "graph runs and it fires in the eager backward (spec 8.1)")
        return handle

    def _register_traced(self, t: Tensor, hook: Any, real: Any) -> Any:
        try:
            body, free = speculate_hook(self, t, hook)
        except ImpureHook:
            return self._register_deferred(t, hook, "register_hook", real)
        except SpeculationFailed as e:
            self.graph_break(str(e))
            self._note(hook, "graph_break", str(e))
            return real(t, hook)
        self._note(hook, "inlined", "hook on an intermediate traced into the graph (spec 8.3)")
        handle = real(t, hook)
        slot = self._new_slot(handle)
        self.hop_slots.add(slot)
        name = f"hook_body_{len(self.submodules)}"
        self.submodules[name] = body
        args = (self.rec.node_of(t), self.graph.get_attr(name),
                *[self.rec.node_of(f) for f in free])
        node = self.graph.call_function(hops.register_hook, args, name="register_hook",
                                        kwargs={"handle_slot": slot})
        node.meta["hook"] = "inlined"
        self.rec.bind_value(t, node)
        return handle

    def _register_deferred(self, t: Tensor, hook: Any, kind: str, real: Any) -> Any:
        hslot = len(self.deferred_hooks)
        self.deferred_hooks.append(hook)
        # the same trampoline later calls register, so backward graphs look alike
        handle = real(t, hops.make_trampoline(self.deferred_hooks, hslot))
        slot = self._new_slot(handle)
        self.hop_slots.add(slot)
        node = self.graph.call_function(hops.register_hook_deferred,
                                        (self.rec.node_of(t), hslot, kind),
                                        name="register_hook_deferred",
                                        kwargs={"handle_slot": slot})
        node.meta["hook"] = "deferred"
        self._note(hook, "compiled_autograd", "compiled autograd on: the hook is looked up at "
                   "backward time (spec 8.4)")
        self.rec.bind_value(t, node)
        return handle

    def on_backward_hook_setup(self, bw: Any, kind: str, value: Any, real: Any) -> Any:
        """A module's backward-hook wrapping (spec: issue 11): one graph operator."""
        single = not isinstance(value, tuple)
        tensors = (value,) if single else value
        source = self.index.source_of(bw.module)
        self.rec.suspended += 1
        try:
            res = real(bw, value)
        finally:
            self.rec.suspended -= 1
        if source is None or not all(isinstance(t, Tensor) for t in tensors) or (
                not single and type(value) is not tuple):
            self.graph_break("module backward hooks on a call the tracer cannot rebuild "
                             "(non-tensor arguments or an unsourced module)")
            return res
        slot = self._bw_slots.get(id(bw))
        if slot is None:
            for hook in [*bw.user_pre_hooks, *bw.user_hooks]:
                note_compiled_hook("module_backward_hook", hook,
                                   getattr(self.fn, "__qualname__", "<region>"), "inlined",
                                   f"full backward hook of {type(bw.module).__name__} compiled "
                                   "into the graph (backward_hook_setup operator)")
            slot = self._bw_slots[id(bw)] = len(self.object_sources)
            self.object_sources.append(source)
            self.keep_alive.append(bw)
        args = (slot, kind, single, *[self.rec.node_of(t) for t in tensors])
        node = self.graph.call_function(module_hooks.backward_hook_setup, args,
                                        name=f"backward_hook_{kind}")
        node.meta["hook"] = "module backward hooks (compiled in)"
        outs = (res,) if single else res
        if single:
            self.rec.bind_value(res, node)
        else:
            self.rec.bind_outputs(node, outs)
        return res

    def _note(self, hook: Any, placement: str, reason: str) -> None:
        """Tell open `HookTrace`s where a tensor hook of this region went."""
        note_compiled_hook("tensor_hook", hook, getattr(self.fn, "__qualname__", "<region>"),
                           placement, reason)

    def on_remove(self, handle: Any) -> None:
        slot = self.handle_slots.get(id(handle))
        if slot is not None:
            if slot in self.hop_slots:
                self.graph_break("removing the handle of a hook on an intermediate tensor "
                                 "inside the compiled region")
                return
            self.effects = [e for e in self.effects
                            if not (isinstance(e, TensorHook) and e.slot == slot)]
            return
        source = self.index.source_of(handle)
        if source is None:
            self.graph_break("Attempted to represent unregistered RemovableHandle")
            return
        self.effects.append(HandleRemove(FromSource(source)))
