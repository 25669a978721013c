"""The compiled call: code-keyed cache, guards, recompiles, graph breaks (spec §3, §6.2, §9.2).

`CodeCache` holds, per code key, the entries made by traces (most recent first). A call checks
the entries' guards; a hit runs the artifact and replays the side-effect log, a miss traces
(NOTE [Execution tracing] in `tracer`).
"""

from __future__ import annotations

import inspect
import warnings
from typing import Any

from hookgrad._config import STATE
from hookgrad._dtypes import get_default_dtype
from hookgrad._runtime import _deterministic  # (spec §6.1: always-guarded global state)
from hookgrad.compile.backends.backends import call_backend
from hookgrad.compile.core import config
from hookgrad.compile.core.counters import counters
from hookgrad.compile.core.dynamic import FRAME_STATES, plan_for
from hookgrad.compile.core.graph import op_count
from hookgrad.compile.core.exc import FailOnRecompileLimitHit, RecompileError, Unsupported
from hookgrad.compile.effects.finalize import Finalizer
from hookgrad.compile.effects.outer_pack import watch_outer_pack_hooks
from hookgrad.compile.guards.guards import GuardSet, build_guards
from hookgrad.compile.effects.recipes import RunState
from hookgrad.compile.core.sources import CallContext
from hookgrad.compile.core.state import RUNS, GraphBreak
from hookgrad.compile.cache.resume import split_at
from hookgrad.compile.trace.intercept import BACKWARD_BREAK
from hookgrad.compile.trace.symtrace import desym
from hookgrad.compile.trace.tracer import ActiveTrace

__all__ = ["CacheEntry", "CACHES", "compiled_call", "reset_caches", "CA_STATE"]


class _CAState:
    """Whether compiled autograd is on (set by `hookgrad._dynamo.compiled_autograd`)."""

    enabled_depth = 0

    def enabled(self) -> bool:
        return self.enabled_depth > 0 or bool(config.compiled_autograd)


CA_STATE = _CAState()


class CacheEntry:
    """One traced variant of a code key: its guards and how to run it."""

    def __init__(self, gkey: tuple, guards: GuardSet, eager: bool = False) -> None:
        self.gkey = gkey
        self.guards = guards
        self.eager = eager  # a graph break: run the original function
        self.artifact: Any = None
        self.gm: Any = None
        self.sources: list = []
        self.effects: list = []
        self.ret: Any = None
        self.hook_recipes: list = []
        self.object_sources: list = []  # fetched before the artifact runs (run.objects)
        self.n_slots = 0
        self.run_original = False  # compiled-autograd graphs execute the engine (see ca_graph)
        self.dynamic = False  # traced with symbolic sizes (spec §6.3)
        self.split: Any = None  # a break at `backward()`: the call as head + rest (`resume`)

    def run(self, fn: Any, ctx: CallContext, args: tuple, kwargs: dict) -> Any:
        if self.split is not None:
            return self.split(args, kwargs)
        if self.eager or self.run_original:
            return fn(*args, **kwargs)
        run = RunState(ctx, self.n_slots, len(self.hook_recipes))
        run.objects = [src.get(ctx) for src in self.object_sources]
        if self.artifact is not None:
            inputs = [src.get(ctx) for src in self.sources]
            RUNS.append(run)
            try:
                out = self.artifact(*inputs)
            finally:
                RUNS.pop()
            run.outputs = out if isinstance(out, (tuple, list)) else (out,)
        for effect in self.effects:
            effect.replay(run)
        for i, recipe in enumerate(self.hook_recipes):
            run.hooks[i] = recipe.build(run)
        return self.ret.build(run)


CACHES: dict[Any, list[CacheEntry]] = {}
_WARNED: set[Any] = set()


def reset_caches() -> None:
    CACHES.clear()
    FRAME_STATES.clear()
    _WARNED.clear()


def _bind(fn: Any, args: tuple, kwargs: dict) -> dict:
    code = fn.__code__
    plain = _PLAIN.get(code)
    if plain is None:  # positional-only calls of functions without *args/**kwargs/defaults
        plain = _PLAIN[code] = (code.co_varnames[:code.co_argcount]
                                if not code.co_flags & 0x0C and not code.co_kwonlyargcount
                                else ())
    if not kwargs and plain and len(args) == len(plain):
        return dict(zip(plain, args))
    # a signature holds the defaults of the function it was made from: functions that share a
    # code object (made by one `def` run twice) each have their own (a mutable default list)
    defaults = (getattr(fn, "__defaults__", None), getattr(fn, "__kwdefaults__", None))
    hit = _SIGS.get(code)
    if hit is None or hit[0] is not defaults[0] or hit[1] is not defaults[1]:
        hit = _SIGS[code] = (*defaults, inspect.signature(fn))
    sig = hit[2]
    bound = sig.bind(*args, **kwargs)
    bound.apply_defaults()
    return dict(bound.arguments)


_PLAIN: dict[Any, tuple] = {}
_SIGS: dict[Any, tuple] = {}  # code -> (__defaults__, __kwdefaults__, signature)


def compiled_call(opt: Any, key: Any, fn: Any, args: tuple, kwargs: dict) -> Any:
    """One call of a compiled callable (spec §3's algorithm)."""
    ctx = CallContext(fn, _bind(fn, args, kwargs))
    gkey = (STATE.grad_enabled, get_default_dtype(), _deterministic[0], opt.backend_key,
            CA_STATE.enabled(), bool(STATE.saved_hooks_stack))
    entries = CACHES.setdefault(key, [])
    for entry in entries:
        if entry.gkey == gkey and entry.guards.first_failure(ctx) is None:
            return entry.run(fn, ctx, args, kwargs)
    if len(entries) >= min(config.recompile_limit, config.accumulated_recompile_limit):
        if config.fail_on_recompile_limit_hit:
            raise FailOnRecompileLimitHit(
                f"{fn.__qualname__}: recompile limit reached with "
                "config.fail_on_recompile_limit_hit=True")
        if key not in _WARNED:  # (PyTorch logs; hookgrad warns once per code key, §14.3)
            _WARNED.add(key)
            name = ("recompile_limit" if config.recompile_limit
                    <= config.accumulated_recompile_limit else "accumulated_recompile_limit")
            warnings.warn(f"hookgrad.compile: {fn.__qualname__} reached the recompile limit "
                          f"(config.{name}={getattr(config, name)}); further "
                          "misses run eagerly", UserWarning, stacklevel=3)
        return fn(*args, **kwargs)
    if entries and config.error_on_recompile:
        raise RecompileError(_recompile_message(fn, entries, ctx, gkey))
    return _trace_and_store(opt, entries, gkey, fn, ctx, args, kwargs)


def _recompile_message(fn: Any, entries: list, ctx: CallContext, gkey: tuple) -> str:
    entry = entries[0]
    reason = ("global state changed (grad mode, default dtype, deterministic algorithms, backend "
              "or compiled autograd)"
              if entry.gkey != gkey else entry.guards.first_failure(ctx))
    return f"Recompiling function {fn.__name__} in {fn.__code__.co_filename}\n" \
           f"    triggered by the following guard failure(s):\n    - {reason}"


def _trace_and_store(opt: Any, entries: list, gkey: tuple, fn: Any, ctx: CallContext,
                     args: tuple, kwargs: dict) -> Any:
    # code that already broke to eager is retraced static: after a break the rest of the call
    # runs eagerly, and symbolic numbers would reach code that records nothing
    broke = any(e.eager for e in entries)
    plan = None if opt.run_original or broke else plan_for(opt.key, fn, ctx, opt.dynamic)
    trace = ActiveTrace(fn, ctx, ca=CA_STATE.enabled(), lenient=opt.run_original, plan=plan)
    try:
        with watch_outer_pack_hooks(trace):
            result = trace.run(args, kwargs)
    except BaseException:
        if trace.sym is not None:  # what the call stored before raising: plain numbers
            desym(trace, None)
        raise
    pieces = None
    if trace.break_reason is None:
        try:
            pieces = Finalizer(trace).finish(result)
        except GraphBreak as e:
            trace.graph_break(str(e))
    guards = build_guards(trace, config.skip_nnmodule_hook_guards)
    if guards.unguardable and trace.break_reason is None:  # state no guard can check
        trace.break_reason = guards.unguardable[0]
    if trace.sym is not None:  # the caller and the world get plain numbers, not symbolic ones
        result = desym(trace, result)
    if trace.break_reason is not None or pieces is None:
        reason = trace.break_reason or "graph break"
        counters["graph_break"][reason] += 1
        if opt.fullgraph:
            trace.rollback()
            raise Unsupported(reason)
        entry = CacheEntry(gkey, guards, eager=True)
        if reason == BACKWARD_BREAK and not opt.run_original:
            entry.split = split_at(fn, trace.break_line, lambda head: type(opt)(
                head, opt.backend_key, opt.fullgraph, opt.dynamic),
                key=(opt.backend_key if isinstance(opt.backend_key, str) else id(opt.backend),
                     opt.fullgraph, opt.dynamic))
        _insert(entries, entry, bool(trace.plan))
        return result
    entry = CacheEntry(gkey, guards)
    gm, entry.effects, (entry.ret, entry.hook_recipes) = pieces
    entry.gm = gm
    entry.sources = [src for _n, src, _m in trace.rec.placeholders]
    entry.n_slots = len(trace.handle_slots)
    entry.object_sources = list(trace.object_sources)
    entry.run_original = opt.run_original
    if op_count(gm.graph) > 0:
        example = [src.get(ctx) for src in entry.sources]
        entry.artifact = call_backend(opt.backend, gm, example)
    counters["stats"]["unique_graphs"] += 1
    _insert(entries, entry, bool(trace.plan))
    return result


def _insert(entries: list, entry: CacheEntry, dynamic: bool) -> None:
    """Most recent first, but static entries before dynamic ones: a shape both accept runs the
    static graph, which backends may have specialised further (a ragged last batch must not
    move every later full batch onto the dynamic graph)."""
    entry.dynamic = dynamic
    if not dynamic:
        entries.insert(0, entry)
        return
    at = next((i for i, e in enumerate(entries) if e.dynamic), len(entries))
    entries.insert(at, entry)
