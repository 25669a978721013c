"""End of a trace: recipes for everything that escapes, the side-effect log, the graph outputs.

Turns the trace-time objects into `recipes` (graph outputs, sources, rebuilt closures/partials,
handles) and the snapshot diff into `effects` (spec §7). Anything that cannot be rebuilt on a
later call is a graph break.
"""

from __future__ import annotations

import functools
import types
from typing import Any

from hookgrad._tensor import Tensor
from hookgrad.compile.effects import recipes as R
from hookgrad.compile.effects.effects import (
    DictUpdate,
    ListExtend,
    SetAttr,
    SetCell,
    SetContents,
    SetGlobal,
    TensorHook,
)
from hookgrad.compile.core.graph import (
    FACTORY_CALLS,
    USER_CALLS,
    Node,
    compile_module,
)
from hookgrad.compile.core.sources import is_constant
from hookgrad.compile.core.state import GraphBreak
from hookgrad.compile.core.symbolic import is_sym
from hookgrad.compile.effects.world import EMPTY
from hookgrad.utils.hooks import RemovableHandle

__all__ = ["Finalizer"]

HANDLE_IN_GLOBALS = "Storing Tensor hook handle in globals (frame skipped)"


class Finalizer:
    """Builds recipes for one finished trace (`tracer.ActiveTrace`)."""

    def __init__(self, trace: Any) -> None:
        self.trace = trace
        self.memo: dict[int, R.Recipe] = {}
        self.keep: list[Any] = []
        self.out_nodes: list[Node] = []
        self._out_index: dict[int, int] = {}

    # -------------------------------------------------------------- recipes
    def recipe(self, value: Any) -> R.Recipe:
        key = id(value)
        hit = self.memo.get(key)
        if hit is None:
            self.keep.append(value)
            hit = self.memo[key] = self._make(value)
        return hit

    def _output(self, node: Node) -> R.Recipe:
        idx = self._out_index.get(id(node))
        if idx is None:
            idx = self._out_index[id(node)] = len(self.out_nodes)
            self.out_nodes.append(node)
        return R.Output(idx)

    def _make(self, v: Any) -> R.Recipe:
        tr = self.trace
        if is_sym(v):  # a symbolic size or scalar: computed by the graph (spec §6.3)
            return self._output(v.node)
        if is_constant(v):
            return R.Const(v)
        if isinstance(v, Tensor):
            return self._tensor(v)
        if isinstance(v, RemovableHandle) and id(v) in tr.handle_slots:
            return R.NewHandle(tr.handle_slots[id(v)])
        source = tr.index.source_of(v)
        if source is not None:
            return R.FromSource(source)
        if isinstance(v, (type, types.ModuleType, types.BuiltinFunctionType)):
            return R.Identity(v)
        if isinstance(v, types.FunctionType):
            return self._function(v)
        if isinstance(v, functools.partial):
            return R.NewPartial(self.recipe(v.func), self.recipe(v.args), self.recipe(v.keywords))
        if isinstance(v, (list, tuple)):
            return R.NewSeq(type(v), [self.recipe(x) for x in v])
        if isinstance(v, dict):
            return R.NewDict(type(v), [(k, self.recipe(x)) for k, x in v.items()])
        raise GraphBreak(f"cannot reconstruct a {type(v).__name__} created in the compiled region")

    def _tensor(self, t: Tensor) -> R.Recipe:
        rec = self.trace.rec
        if rec.is_intermediate(t):
            return self._output(rec.node_of(t))
        source = self.trace.index.source_of(t)
        if source is not None:
            return R.FromSource(source)
        raise GraphBreak("a tensor created outside the traced operations escapes the region")

    def _function(self, fn: types.FunctionType) -> R.Recipe:
        cells = [self._cell(c) for c in fn.__closure__ or ()]
        defaults = self.recipe(fn.__defaults__) if fn.__defaults__ else None
        kwdefaults = self.recipe(fn.__kwdefaults__) if fn.__kwdefaults__ else None
        return R.NewFunction(fn, defaults, cells, kwdefaults)

    def _cell(self, cell: Any) -> R.Recipe:
        key = id(cell)
        hit = self.memo.get(key)
        if hit is not None:
            return hit
        self.keep.append(cell)
        known = self.trace.index.cells.get(key)
        if known is not None:
            hit = R.ExistingCell(known[0], cell)
        else:
            try:
                content = cell.cell_contents
            except ValueError:
                hit = R.NewCell(None)
            else:
                hit = R.NewCell(self.recipe(content))
        self.memo[key] = hit
        return hit

    # -------------------------------------------------------------- effects
    def effects_from_diff(self) -> list[Any]:
        out: list[Any] = []
        tr = self.trace
        for ch in tr.snapshot.diff():
            if ch.kind == "class":
                # a class attribute the region wrote (``Counter.count += 1``): its reads are not
                # noted (classes are not instrumented), so the call stays eager
                raise GraphBreak(f"mutation of class attribute {ch.owner.__name__}.{ch.key} "
                                 "inside the compiled region")
            new = None if ch.new is EMPTY else self.recipe(ch.new)
            if ch.kind == "global":
                if isinstance(ch.new, RemovableHandle) and id(ch.new) in tr.handle_slots:
                    raise GraphBreak(HANDLE_IN_GLOBALS)
                out.append(SetGlobal(ch.owner, ch.key, new))
                continue
            if ch.kind == "cell":
                known = tr.index.cells.get(id(ch.owner))
                out.append(SetCell(R.ExistingCell(known[0] if known else None, ch.owner), new))
                continue
            owner = tr.index.source_of(ch.owner)
            owner_recipe = R.FromSource(owner) if owner is not None else R.Identity(ch.owner)
            if ch.kind == "attr":
                out.append(SetAttr(owner_recipe, ch.key, new))
            else:
                out.append(self._container_effect(owner_recipe, ch.old, ch.new))
        return out

    def _container_effect(self, owner: R.Recipe, old: Any, new: Any) -> Any:
        if isinstance(old, list):
            n = len(old)
            if len(new) >= n and all(a is b for a, b in zip(old, new)):
                return ListExtend(owner, [self.recipe(v) for v in new[n:]])
            return SetContents(owner, self.recipe(new))
        items: list = [(k, None) for k in old if k not in new]
        items += [(k, self.recipe(v)) for k, v in new.items() if old.get(k, EMPTY) is not v]
        return DictUpdate(owner, items)

    def finish(self, result: Any) -> tuple[Any, list[Any], R.Recipe]:
        """(graph module, effects in order, return recipe); raises `GraphBreak`."""
        tr = self.trace
        if tr.rec.lenient:
            # a compiled-autograd graph: later calls execute the engine, nothing to rebuild
            tr.graph.output(())
            return compile_module(tr.graph, dict(tr.rec.constants)), [], (R.Const(None), [])
        effects = list(tr.effects) + self.effects_from_diff()
        for e in effects:
            if isinstance(e, TensorHook):
                e.hook_recipe = self.recipe(e.hook)
        ret = self.recipe(result)
        hooks = [self.recipe(h) for h in tr.deferred_hooks]
        tr.graph.output(tuple(self.out_nodes))
        attrs: dict[str, Any] = dict(tr.rec.constants)
        attrs.update(tr.submodules)
        gm = compile_module(tr.graph, attrs, {USER_CALLS: tr.rec.user_calls,
                                              FACTORY_CALLS: tr.rec.factory_calls})
        return gm, effects, (ret, hooks)
