"""Value recipes: rebuild, on every compiled call, the Python values a trace produced (spec §7.2).

A recipe is built once at trace time from a trace-time value; ``build(run)`` evaluates it against
one call (`RunState`: its sources, graph outputs and handle slots). The same trace-time object
always gets the same recipe object, and `RunState.memo` makes one call build it once, so identity
inside a call is preserved (spec §7.3: ``h2 is h``).
"""

from __future__ import annotations

import functools
import types
from collections import OrderedDict
from typing import Any

from hookgrad.compile.core.sources import CallContext, Source
from hookgrad.utils.hooks import RemovableHandle

__all__ = ["RunState", "Recipe", "Const", "FromSource", "Output", "Identity", "NewFunction",
           "NewPartial", "NewSeq", "NewDict", "NewHandle", "ExistingCell", "dead_handle"]


class RunState:
    """Everything one compiled call's recipes and side effects read and write."""

    __slots__ = ("ctx", "outputs", "slots", "memo", "hooks", "objects", "bwhooks")

    def __init__(self, ctx: CallContext, n_slots: int, n_hooks: int) -> None:
        self.objects: list[Any] = []  # sourced objects graph operators need (modules)
        self.bwhooks: dict[int, Any] = {}  # this call's module BackwardHook objects
        self.ctx = ctx
        self.outputs: tuple = ()
        self.slots: list[Any] = [None] * n_slots  # handles of registrations made in the region
        self.memo: dict[int, Any] = {}
        self.hooks: list[Any] = [None] * n_hooks  # BackwardState: deferred intermediate hooks


def dead_handle() -> RemovableHandle:
    """A handle whose registry is already gone: ``remove()`` is a no-op (spec §7.4)."""
    return RemovableHandle(OrderedDict())


class Recipe:
    """Base: ``build`` memoises ``make`` per call."""

    def build(self, run: RunState) -> Any:
        key = id(self)
        if key in run.memo:
            return run.memo[key]
        value = run.memo[key] = self.make(run)
        return value

    def make(self, run: RunState) -> Any:
        raise NotImplementedError


class Const(Recipe):
    def __init__(self, value: Any) -> None:
        self.value = value

    def build(self, run: RunState) -> Any:
        return self.value

    def __repr__(self) -> str:
        return f"Const({self.value!r})"


class Identity(Const):
    """A pre-existing object without a source that never changes (classes, modules, builtins)."""

    def __repr__(self) -> str:
        return f"Identity({type(self.value).__name__})"


class FromSource(Recipe):
    def __init__(self, source: Source) -> None:
        self.source = source

    def make(self, run: RunState) -> Any:
        return self.source.get(run.ctx)

    def __repr__(self) -> str:
        return f"Source({self.source})"


class Output(Recipe):
    def __init__(self, index: int) -> None:
        self.index = index

    def build(self, run: RunState) -> Any:
        return run.outputs[self.index]

    def __repr__(self) -> str:
        return f"GraphOutput({self.index})"


class NewHandle(Recipe):
    def __init__(self, slot: int) -> None:
        self.slot = slot

    def build(self, run: RunState) -> Any:
        handle = run.slots[self.slot]
        if handle is None:
            handle = run.slots[self.slot] = dead_handle()
        return handle

    def __repr__(self) -> str:
        return f"NewHandle({self.slot})"


class ExistingCell(Recipe):
    """A closure cell that existed before the call: shared, not copied."""

    def __init__(self, source: Source | None, cell: Any) -> None:
        self.source = source
        self.cell = cell

    def make(self, run: RunState) -> Any:
        if self.source is None:
            return self.cell
        src = self.source  # the owner function's source plus a ("cell", i) step
        owner = Source(src.root, src.steps[:-1]).get(run.ctx) if src.steps else run.ctx.fn
        return owner.__closure__[src.steps[-1][1] if src.steps else src.root[1]]


class NewCell(Recipe):
    def __init__(self, content: Recipe | None) -> None:
        self.content = content

    def make(self, run: RunState) -> Any:
        cell = types.CellType()
        if self.content is not None:
            cell.cell_contents = self.content.build(run)
        return cell


class NewFunction(Recipe):
    """A lambda/nested function created in the region, rebuilt from its code (spec §7.3)."""

    def __init__(self, fn: types.FunctionType, defaults: Recipe | None, cells: list[Recipe],
                 kwdefaults: Recipe | None) -> None:
        self.code = fn.__code__
        self.globals = fn.__globals__
        self.name = fn.__name__
        self.qualname = fn.__qualname__
        self.defaults = defaults
        self.kwdefaults = kwdefaults
        self.cells = cells

    def make(self, run: RunState) -> Any:
        closure = tuple(c.build(run) for c in self.cells) or None
        defaults = self.defaults.build(run) if self.defaults is not None else None
        fn = types.FunctionType(self.code, self.globals, self.name, defaults, closure)
        fn.__qualname__ = self.qualname
        if self.kwdefaults is not None:
            fn.__kwdefaults__ = self.kwdefaults.build(run)
        return fn

    def __repr__(self) -> str:
        return f"NewFunction({self.qualname})"


class NewPartial(Recipe):
    def __init__(self, func: Recipe, args: Recipe, keywords: Recipe) -> None:
        self.func, self.args, self.keywords = func, args, keywords

    def make(self, run: RunState) -> Any:
        return functools.partial(self.func.build(run), *self.args.build(run),
                                 **self.keywords.build(run))

    def __repr__(self) -> str:
        return f"NewPartial({self.func!r})"


class NewSeq(Recipe):
    def __init__(self, kind: type, items: list[Recipe]) -> None:
        self.kind, self.items = kind, items

    def make(self, run: RunState) -> Any:
        values = [r.build(run) for r in self.items]
        if self.kind is list:
            return values
        # a named tuple's constructor takes the fields one by one (``_make`` takes a sequence)
        make = getattr(self.kind, "_make", None)
        return make(values) if make is not None else self.kind(values)

    def __repr__(self) -> str:
        return f"New{self.kind.__name__}({self.items!r})"


class NewDict(Recipe):
    def __init__(self, kind: type, items: list[tuple[Any, Recipe]]) -> None:
        self.kind, self.items = kind, items

    def make(self, run: RunState) -> Any:
        return self.kind((k, r.build(run)) for k, r in self.items)
