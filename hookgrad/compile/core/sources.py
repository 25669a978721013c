"""Sources: recipes that fetch a pre-existing value at call time (spec §1 "source", §3.1).

A source is a root (an argument ``L['x']``, a closure cell of the entry, a global ``G['name']``)
followed by steps (attribute, item, closure cell, ``.grad``). `SourceIndex` walks everything the
entry can reach before a trace and remembers the first (shortest) source of every object, so the
tracer can tell a *sourced* tensor (a graph input) from an *intermediate* one.
"""

from __future__ import annotations

import enum
import functools
import types
import weakref
from collections import deque
from typing import Any

from hookgrad._backend import device as _device
from hookgrad._dtypes import dtype as _dtype
from hookgrad._legacy import layout as _layout, memory_format as _memory_format
from hookgrad._tensor import Tensor
from hookgrad.nn.modules import _global_hooks as _gh
from hookgrad.nn.modules.module import Module
from hookgrad.utils.hooks import HookRegistry

__all__ = ["Source", "CallContext", "SourceIndex", "is_constant", "is_user_class"]

_GLOBAL_HOOK_DICTS = ("_global_forward_pre_hooks", "_global_forward_hooks",
                      "_global_backward_pre_hooks", "_global_backward_hooks")
# (a ``dtype``, ``device``, ``layout`` or ``memory_format`` passed or stored as a setting is a
# value the code branches on like a number: ``x.to(d)`` traced with float32 kept float32)
_CONSTANT_TYPES = (int, float, bool, str, type(None), complex, bytes, range, slice, _dtype,
                   _device, _layout, _memory_format)


def is_constant(value: Any) -> bool:
    """Immutable plain values (numbers, strings, ranges, slices, enum members, tuples of them,
    hookgrad's dtype, device, layout and memory-format objects): guarded by equality, rebuilt
    as themselves."""
    if isinstance(value, tuple):
        return all(is_constant(v) for v in value)
    return type(value) in _CONSTANT_TYPES or isinstance(value, enum.Enum)


_LIBRARY_MODULES = frozenset({"hookgrad", "builtins", "numpy", "typing", "collections", "abc",
                              "enum", "functools", "types"})
_HEAPTYPE = 1 << 9  # Py_TPFLAGS_HEAPTYPE: a class made by a ``class`` statement or ``type()``


def is_user_class(cls: type) -> bool:
    """A class the user defined: made by Python code (not a C type) outside the libraries.
    (A class defined in ``exec``'d code without ``__name__`` reports ``builtins`` as its
    module, so the module alone does not tell.)"""
    if not cls.__flags__ & _HEAPTYPE:
        return False
    top = cls.__module__.split(".")[0]
    return top == "builtins" or top not in _LIBRARY_MODULES


class CallContext:
    """What sources are evaluated against: the entry function and the call's bound arguments.

    ``memo`` (set only while guards are checked, when nothing can change the world) caches
    what every source resolved to, so guards sharing a path prefix walk it once.
    """

    __slots__ = ("fn", "args", "memo")

    def __init__(self, fn: Any, args: dict) -> None:
        self.fn = fn
        self.args = args
        self.memo: dict | None = None


_MISS = object()
_DATA_DESCRIPTORS: dict[tuple[type, str], bool] = {}


def _attr(value: Any, key: str) -> Any:
    """``getattr(value, key)`` without the cost of ``Module.__getattr__`` for the attributes
    guards read most (instance fields, parameters, submodules, hook dicts)."""
    d = getattr(value, "__dict__", None)
    if d is not None:
        kind = type(value)
        shadowed = _DATA_DESCRIPTORS.get((kind, key))
        if shadowed is None:
            attr = getattr(kind, key, None)
            shadowed = _DATA_DESCRIPTORS[(kind, key)] = hasattr(attr, "__set__") or hasattr(
                attr, "__delete__")
        if not shadowed:
            hit = d.get(key, _MISS)
            if hit is not _MISS:
                return hit
            if isinstance(value, Module):
                for table in ("_parameters", "_modules", "_buffers"):
                    t = d.get(table)
                    if t is not None and key in t:
                        return t[key]
    return getattr(value, key)


class Source:
    """A root plus a path of steps; ``get(ctx)`` fetches the value, ``str`` names it."""

    __slots__ = ("root", "steps", "_text", "parent")

    def __init__(self, root: tuple, steps: tuple = (), parent: Source | None = None) -> None:
        # ("L", name) | ("C", cell_index) | ("G", globals_dict, name) | ("O", object, name)
        self.root = root
        # ("attr", n) | ("item", k) | ("cell", i) | ("dim", d) | ("nth", n) | ("deref", None)
        self.steps = steps
        self._text = ""
        self.parent = parent  # the source one step shorter (shares `get`'s memo)

    def child(self, step: tuple) -> Source:
        return Source(self.root, self.steps + (step,), self)

    def get(self, ctx: CallContext) -> Any:
        memo = ctx.memo
        if memo is not None:
            hit = memo.get(self, _MISS)
            if hit is not _MISS:
                return hit
        if self.parent is not None:
            value = _step(self.parent.get(ctx), *self.steps[-1])
        else:
            value = self._root(ctx)
            for kind, key in self.steps:
                value = _step(value, kind, key)
        if memo is not None:
            memo[self] = value
        return value

    def _root(self, ctx: CallContext) -> Any:
        root = self.root
        if root[0] == "L":
            return ctx.args[root[1]]
        if root[0] == "C":
            return ctx.fn.__closure__[root[1]].cell_contents
        if root[0] == "G":
            return root[1][root[2]]
        return root[1]

    def __str__(self) -> str:
        if not self._text:
            root = self.root
            text = {"L": lambda: f"L[{root[1]!r}]", "C": lambda: f"L['fn'].__closure__[{root[1]}]"
                    ".cell_contents", "G": lambda: f"G[{root[-1]!r}]",
                    "O": lambda: f"nn.modules.module.{root[-1]}"}[root[0]]()
            for kind, key in self.steps:
                text += {"attr": f".{key}", "item": f"[{key!r}]", "nth": f".values()[{key}]",
                         "dim": f".size()[{key}]", "deref": "()",
                         "cell": f".__closure__[{key}].cell_contents"}[kind]
            self._text = text
        return self._text

    __repr__ = __str__

    def name(self) -> str:
        """A Python identifier derived from the source (``L_x_``, ``L_mod_lin_weight_``)."""
        raw = str(self).replace("__closure__", "closure").replace(".cell_contents", "")
        return "".join(c if c.isalnum() else "_" for c in raw).strip("_").replace("__", "_") + "_"


def _step(value: Any, kind: str, key: Any) -> Any:
    if kind == "attr":
        return _attr(value, key)
    if kind == "item":
        return value[key]
    if kind == "dim":  # a size of a tensor (dynamic shapes, spec §6.3)
        return value._data.shape[key]
    if kind == "nth":  # the n-th hook of a hook dict (handle ids are not guarded)
        return list(value.values())[key]
    if kind == "deref":  # the object a weak reference points to
        return value()
    return value.__closure__[key].cell_contents


def _code_names(code: types.CodeType) -> set[str]:
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= _code_names(const)
    return names


class SourceIndex:
    """First source of every object reachable from a call (bounded breadth-first walk)."""

    MAX_DEPTH = 6
    MAX_OBJECTS = 4000

    def __init__(self, fn: Any, args: dict) -> None:
        self.by_id: dict[int, tuple[Source, Any]] = {}
        self.cells: dict[int, tuple[Source, Any]] = {}  # id(cell) -> (source of the owner, cell)
        self.globals_dicts: dict[int, dict] = {}
        # further sources of a tensor reached more than once (an argument passed twice, a
        # parameter passed as an argument): guarded to hold the same object again
        self.aliases: dict[int, list[Source]] = {}
        queue: deque = deque()
        for name, value in args.items():
            queue.append((Source(("L", name)), value, 0))
        for i, cell in enumerate(fn.__closure__ or ()):
            self.cells[id(cell)] = (Source(("C", i)), cell)
            if _cell_filled(cell):
                queue.append((Source(("C", i)), cell.cell_contents, 0))
        self._add_globals(fn, queue, 0)
        for name in _GLOBAL_HOOK_DICTS:  # global module hooks run in every module call
            queue.append((Source(("O", getattr(_gh, name), name)), getattr(_gh, name), 0))
        while queue and len(self.by_id) < self.MAX_OBJECTS:
            source, value, depth = queue.popleft()
            if id(value) in self.by_id or is_constant(value):
                if isinstance(value, Tensor) and self.by_id[id(value)][1] is value:
                    self.aliases.setdefault(id(value), []).append(source)
                continue
            self.by_id[id(value)] = (source, value)
            if depth < self.MAX_DEPTH:
                self._expand(source, value, depth + 1, queue)

    def source_of(self, value: Any) -> Source | None:
        hit = self.by_id.get(id(value))
        return hit[0] if hit is not None and hit[1] is value else None

    def _add_globals(self, fn: Any, queue: deque, depth: int) -> None:
        g = getattr(fn, "__globals__", None)
        code = getattr(fn, "__code__", None)
        if g is None or code is None:
            return
        self.globals_dicts[id(g)] = g
        for name in _code_names(code):
            if name in g:
                queue.append((Source(("G", g, name)), g[name], depth))

    def _expand(self, source: Source, value: Any, depth: int, queue: deque) -> None:
        if isinstance(value, (types.ModuleType, type)):
            return
        if isinstance(value, Tensor):
            if value._grad is not None:
                queue.append((source.child(("attr", "grad")), value._grad, depth))
            return
        if isinstance(value, (list, tuple)):
            for i, item in enumerate(value):
                queue.append((source.child(("item", i)), item, depth))
        elif isinstance(value, HookRegistry):
            for i, item in enumerate(list(value.values())):
                queue.append((source.child(("nth", i)), item, depth))
        elif isinstance(value, dict):
            for key, item in list(value.items()):
                if is_constant(key):
                    queue.append((source.child(("item", key)), item, depth))
        elif isinstance(value, functools.partial):
            queue.append((source.child(("attr", "func")), value.func, depth))
            for i, item in enumerate(value.args):
                queue.append((source.child(("attr", "args")).child(("item", i)), item, depth))
            for key, item in value.keywords.items():
                queue.append((source.child(("attr", "keywords")).child(("item", key)), item,
                              depth))
        elif isinstance(value, weakref.ref):  # (what it points to is state like an attribute)
            target = value()
            if target is not None:
                queue.append((source.child(("deref", None)), target, depth))
        elif isinstance(value, types.MethodType):
            queue.append((source.child(("attr", "__self__")), value.__self__, depth))
            queue.append((source.child(("attr", "__func__")), value.__func__, depth))
        elif isinstance(value, types.FunctionType):
            self._expand_function(source, value, depth, queue)
        elif isinstance(value, Module):
            self._expand_module(source, value, depth, queue)
        elif hasattr(value, "__dict__"):
            for key, item in list(vars(value).items()):
                queue.append((source.child(("attr", key)), item, depth))

    def _expand_function(self, source: Source, fn: Any, depth: int, queue: deque) -> None:
        for i, cell in enumerate(fn.__closure__ or ()):
            self.cells.setdefault(id(cell), (source.child(("cell", i)), cell))
            if _cell_filled(cell):
                queue.append((source.child(("cell", i)), cell.cell_contents, depth))
        self._add_globals(fn, queue, depth)

    def _expand_module(self, source: Source, mod: Module, depth: int, queue: deque) -> None:
        d = vars(mod)
        for table in ("_parameters", "_buffers", "_modules"):
            for key, item in d.get(table, {}).items():
                if item is not None:
                    queue.append((source.child(("attr", key)), item, depth))
        for key, item in d.items():
            if key.endswith("hooks") and isinstance(item, dict):
                queue.append((source.child(("attr", key)), item, depth))
            elif not key.startswith("_") or key == "__dict__":
                queue.append((source.child(("attr", key)), item, depth))
        fwd = type(mod).forward
        if isinstance(fwd, types.FunctionType):  # what forward reads: its globals and cells
            fsrc = source.child(("attr", "forward")).child(("attr", "__func__"))
            self._expand_function(fsrc, fwd, depth, queue)


def _cell_filled(cell: Any) -> bool:
    try:
        cell.cell_contents  # noqa: B018 - probing an empty cell raises ValueError
    except ValueError:
        return False
    return True
