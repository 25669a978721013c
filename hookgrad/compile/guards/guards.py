"""Guards: cheap predicates on sources checked before an artifact is reused (spec §6).

Each guard is a closure over a `Source` plus a text for `RecompileError` messages. What gets
guarded follows spec §6.1: tensor inputs by metadata, constant arguments by value, every Python
function the trace called (and that can be re-fetched) by ``__code__`` identity plus the constant
closure cells, globals and ``partial`` arguments it could read, module ``training`` flags and the
hook dictionaries of modules and the global module hooks (§6.5).
"""

from __future__ import annotations

import collections
import enum
import functools
import types
import weakref
from collections.abc import Callable
from typing import Any

import numpy as np

from hookgrad._tensor import Tensor
from hookgrad.compile.effects.attr_reads import has_attribute
from hookgrad.compile.effects.blind_writes import OWN_DIR, written_blindly
from hookgrad.compile.effects.world import freeze_container
from hookgrad.compile.core.dynamic import DynamicPlan, dynamic_tensor_check
from hookgrad.compile.guards.identity import MAX_DEPTH, identity_guards
from hookgrad.compile.trace.recorder import tensor_layout, tensor_meta
from hookgrad.compile.core.sources import CallContext, Source, is_constant, is_user_class
from hookgrad.nn.modules import _global_hooks as _gh
from hookgrad.nn.modules.module import Module

__all__ = ["GuardSet", "build_guards", "hook_signature"]

_HOOK_DICTS = ("_forward_pre_hooks", "_forward_hooks", "_backward_pre_hooks", "_backward_hooks")
_GLOBAL_DICTS = ("_global_forward_pre_hooks", "_global_forward_hooks",
                 "_global_backward_pre_hooks", "_global_backward_hooks")


def hook_signature(registry: Any) -> tuple:
    """Length and order of a hook dict by hook code (keys, i.e. handle ids, not guarded)."""
    if not registry:
        return ()
    return tuple(_code_or_id(fn) for fn in registry.values())


def _code_or_id(fn: Any) -> Any:
    while isinstance(fn, functools.partial):
        fn = fn.func
    return getattr(fn, "__code__", None) or id(fn)


class GuardSet:
    """An ordered list of ``(check(ctx) -> bool, description)``."""

    def __init__(self) -> None:
        self.guards: list[tuple[Callable[[CallContext], bool], str]] = []
        self._seen: set[str] = set()
        # state the trace depended on that no guard can check (an iterator it may have
        # advanced): the frame runs eagerly instead (a graph break with this reason)
        self.unguardable: list[str] = []

    def add(self, check: Callable[[CallContext], bool], desc: str) -> None:
        if desc not in self._seen:
            self._seen.add(desc)
            self.guards.append((check, desc))

    def first_failure(self, ctx: CallContext) -> str | None:
        ctx.memo = {}  # nothing changes the world while guards run: share path walks
        try:
            for check, desc in self.guards:
                try:
                    if not check(ctx):
                        return desc
                except Exception:  # noqa: BLE001 - a source that no longer resolves fails it
                    return desc
            return None
        finally:
            ctx.memo = None

    def __len__(self) -> int:
        return len(self.guards)


def _equal(gs: GuardSet, src: Source, value: Any) -> None:
    kind = type(value)
    gs.add(lambda ctx: type(v := src.get(ctx)) is kind and v == value, f"{src} == {value!r}")


def _tensor(gs: GuardSet, src: Source, meta: tuple, layout: tuple) -> None:
    # strides too (PyTorch's TENSOR_MATCH checks them): ``is_contiguous()``, ``stride()`` and
    # whether ``view`` works are read from them, and a transposed input traced as a contiguous
    # one returned the contiguous branch's result
    kind, dtype, requires_grad, shape = meta
    strides = layout[0]
    if src.root[0] == "L" and not src.steps:  # the common case: an argument (no path walk)
        name = src.root[1]

        def check(ctx: CallContext) -> bool:
            t = ctx.args[name]
            return (type(t) is kind and t._requires_grad is requires_grad
                    and t._data.shape == shape and t._data.dtype == dtype
                    and t._data.strides == strides)
    else:
        def check(ctx: CallContext) -> bool:
            t = src.get(ctx)
            return (type(t) is kind and t._requires_grad is requires_grad
                    and t._data.shape == shape and t._data.dtype == dtype
                    and t._data.strides == strides)
    gs.add(check, f"TENSOR_MATCH {src} {meta[1]} requires_grad={meta[2]} size={list(meta[3])} "
                  f"byte strides={list(strides)}")


def build_guards(trace: Any, skip_empty_hooks: bool) -> GuardSet:
    """Guards for a finished trace (see the module docstring)."""
    gs = GuardSet()
    plan = trace.plan
    for node, src, meta in trace.rec.placeholders:
        if meta is not None:  # sizes and scalars (dynamic shapes) are guarded with their owner
            _any_tensor(gs, src, meta, plan, node.meta["layout"])
    identity_guards(gs, trace)
    # an argument container (a mutable default, a list passed in) is guarded on its state
    # before the trace: the trace call itself may have changed it (``acc.append(1)``)
    before = _containers_before(trace)
    for name, value in trace.ctx.args.items():
        _arg_guards(gs, Source(("L", name)), value, 0, plan, before)
    for check, desc in trace.sym_guards:  # specialisations of symbolic sizes (spec §6.3)
        gs.add(check, desc)
    if trace.attr_reads is not None:  # constants read from objects (NOTE [Attribute reads])
        for src, kind, value in trace.attr_reads.guards(trace.snapshot):
            if kind == "type":
                gs.add(lambda ctx, s=src, c=value: type(s.get(ctx)) is c,
                       f"type({src}) is {value.__name__}")
            elif kind == "grad_is_none":  # (the stored field: the property may warn)
                gs.add(lambda ctx, s=src, w=value: (s.get(ctx)._grad is None) is w,
                       f"{src}.grad is {'' if value else 'not '}None")
            elif kind == "grad_fn_is_none":
                gs.add(lambda ctx, s=src, w=value: (s.get(ctx)._grad_fn is None) is w,
                       f"{src}.grad_fn is {'' if value else 'not '}None")
            elif kind == "absent":
                gs.add(lambda ctx, s=src, n=value: not has_attribute(s.get(ctx), n),
                       f"not hasattr({src}, {value!r})")
            elif kind == "unguardable":
                gs.unguardable.append(value)
            else:
                _equal(gs, src, value)
        for getter, args, value in list(trace.attr_reads.settings.values()):
            gs.add(lambda ctx, f=getter, a=args, v=value: f(*a) == v,
                   f"{getattr(getter, '__name__', getter)}{args} == {value!r}")
    _function_guards(gs, trace)
    _container_guards(gs, trace)
    _class_guards(gs, trace)
    _module_guards(gs, trace, skip_empty_hooks)
    return gs


_MAX_GUARDED_ITEMS = 64


def _containers_before(trace: Any) -> tuple[dict, set]:
    """The lists and dicts the trace's world held, as they were before the trace (by id), and
    the ids of those the region only wrote to blindly."""
    old = {id(c): before for c, before in (*trace.snapshot.lists, *trace.snapshot.dicts)}
    # (D) a container the region itself only writes to blindly (a log it appends to) is not
    # guarded: its changes are replayed, and PyTorch's guard on it recompiles on every call.
    # One the region also read is guarded like any other (NOTE [Blind writes])
    mutated = {id(ch.owner) for ch in trace.snapshot.diff()
               if ch.kind in ("list", "dict") and written_blindly(trace, ch.owner)}
    return old, mutated


def _container_guards(gs: GuardSet, trace: Any) -> None:
    """Lists, tuples and dicts (subclasses too) held by globals and closure cells the traced
    code can read: type, length (keys for dicts), constant items by value and the other items
    by type (a module or callable object swapped for one of another class; builtin functions
    by identity), from before the trace. The tracer cannot see which items the code read, so
    it guards them all (PyTorch guards these containers too: a changed unused key recompiles
    there as well). Deques, sets, byte arrays and mapping proxies are compared whole; one the
    region changed cannot be replayed (the frame runs eagerly)."""
    old, mutated = _containers_before(trace)
    held = [(s, v) for s, v in list(trace.index.by_id.values()) if _held_directly(s)]
    others = dict(trace.snapshot.others)
    for src, value in [*held, *_read_attributes(trace)]:
        if id(value) in mutated:
            continue
        if isinstance(value, _OTHER_CONTAINERS):
            _other_container(gs, src, value, others.get(id(value)))
            continue
        if not isinstance(value, (list, tuple, dict)):
            continue
        kind = type(value)
        before = value if isinstance(value, tuple) else old.get(id(value))
        if before is None:
            continue
        pairs = list(before.items() if isinstance(before, dict) else enumerate(before))
        consts = tuple((k, v) for k, v in pairs if is_constant(v))
        objects = tuple((k, v if _by_identity(v) else None, type(v)) for k, v in pairs
                        if not is_constant(v) and not isinstance(v, (list, tuple, dict)))
        if len(consts) + len(objects) > _MAX_GUARDED_ITEMS:
            consts, objects = (), ()  # large tables: type and length only
        keys = tuple(before) if isinstance(before, dict) else None
        gs.add(_container_check(src, kind, len(before), keys, consts, objects),
               f"{src}: {kind.__name__} of {len(before)} with {len(consts)} constant items "
               f"and {len(objects)} typed items")


_OTHER_CONTAINERS = (collections.deque, set, frozenset, bytearray, types.MappingProxyType)


def _other_container(gs: GuardSet, src: Source, value: Any, before: Any) -> None:
    if before is None:
        return
    if freeze_container(value) != before:
        gs.unguardable.append(f"{src} ({type(value).__name__}) changed by the region (not "
                              "replayed)")
        return
    gs.add(lambda ctx: freeze_container(src.get(ctx)) == before,
           f"{src} unchanged ({type(value).__name__})")


def _by_identity(value: Any) -> bool:
    """Objects whose identity is their meaning (builtin functions: ``math.sqrt``)."""
    return isinstance(value, (types.BuiltinFunctionType, np.ufunc))


def _class_guards(gs: GuardSet, trace: Any) -> None:
    """Constant attributes of user classes (``Counter.count``) that the traced user code
    names: classes are not instrumented for reads (NOTE [Attribute reads]), so every constant
    class attribute a called function could have read is guarded by value. The methods and
    other class-level objects those names find on the classes of the objects the region
    reaches (``M.act = other`` between calls) are guarded by identity."""
    names: set[str] = set()
    for code in trace.called_codes:
        if not code.co_filename.startswith(OWN_DIR):
            names.update(code.co_names)
    for cls, old in trace.snapshot.classes:
        src = trace.index.source_of(cls)
        if src is None:
            continue
        for name in names & old.keys():
            if not name.startswith("__") and is_constant(old[name]):
                _equal(gs, src.child(("attr", name)), old[name])
    held = []
    for cls in _user_classes(trace):
        for name in names & vars(cls).keys():
            value = vars(cls)[name]
            if not name.startswith("__") and not is_constant(value):
                held.append((cls, name, value))
    if held:
        rows = tuple(held)
        gs.add(lambda ctx: all(vars(c).get(n) is v for c, n, v in rows),
               f"{len(rows)} class-level objects unchanged "
               f"({', '.join(f'{c.__name__}.{n}' for c, n, _v in rows[:3])}...)")


def _user_classes(trace: Any) -> list[type]:
    """The user-defined classes (and their user-defined bases) of the objects the region
    reaches, and the user classes it reaches as values."""
    seen: dict[int, type] = {}
    kinds: set[int] = set()
    for _src, value in list(trace.index.by_id.values()):
        kind = value if isinstance(value, type) else type(value)
        if id(kind) in kinds:
            continue
        kinds.add(id(kind))
        for cls in kind.__mro__:
            if is_user_class(cls):
                seen.setdefault(id(cls), cls)
    return list(seen.values())


def _read_attributes(trace: Any) -> list[tuple[Source, Any]]:
    """Containers the region read as attributes of objects (``len(cfg.sizes)``): guarded like
    those held by globals (NOTE [Attribute reads] notes the names; containers reached through
    an attribute are never blind writes, NOTE [Blind writes])."""
    if trace.attr_reads is None:
        return []
    out = []
    for obj, names in list(trace.attr_reads.read.values()):
        src = trace.index.source_of(obj)
        if src is None:
            continue
        d = getattr(obj, "__dict__", {})
        for name in names:
            value = d.get(name)
            if isinstance(value, (list, dict, tuple, *_OTHER_CONTAINERS)) \
                    and not name.startswith("_"):
                out.append((src.child(("attr", name)), value))
    return out


def _held_directly(src: Source) -> bool:
    """Held by a global or a closure cell (or bound by a ``partial`` held there), or an item of
    such a container (two levels: a ``G["sizes"]`` list read as ``len(G["sizes"])`` is state
    like ``G`` itself)."""
    steps = list(src.steps)
    for _ in range(2):
        if steps and steps[-1][0] == "item":
            steps.pop()
    return src.root[0] in ("G", "C") and (not steps or steps[-1][0] == "cell"
                                          or steps[-1] in _PARTIAL_STEPS)


# a ``functools.partial``'s bound arguments (``partial(f, ks=ks)``) are state like a cell's
_PARTIAL_STEPS = (("attr", "args"), ("attr", "keywords"))


def _container_check(src: Source, kind: type, n: int, keys: tuple | None,
                     consts: tuple, objects: tuple = ()) -> Callable[[CallContext], bool]:
    def check(ctx: CallContext) -> bool:
        c = src.get(ctx)
        if type(c) is not kind or len(c) != n or (keys is not None and tuple(c) != keys):
            return False
        for k, v in consts:
            item = c[k]
            if type(item) is not type(v) or item != v:
                return False
        for k, same_object, item_type in objects:
            item = c[k]
            if type(item) is not item_type or (same_object is not None
                                               and item is not same_object):
                return False
        return True
    return check


def _any_tensor(gs: GuardSet, src: Source, meta: tuple, plan: DynamicPlan,
                layout: tuple) -> None:
    """TENSOR_MATCH; `layout` is `tensor_layout`'s as the trace saw it."""
    dims = plan.dims_of(src) if plan else ()
    if dims:
        gs.add(*dynamic_tensor_check(src, meta, dims, layout))
    else:
        _tensor(gs, src, meta, layout)


def _arg_guards(gs: GuardSet, src: Source, value: Any, depth: int, plan: DynamicPlan,
                before: tuple[dict, set] = ({}, set())) -> None:
    if plan and str(src) in plan.scalars:  # a dynamic int/float: only its type
        kind = type(value)
        gs.add(lambda ctx: type(src.get(ctx)) is kind, f"type({src}) is {kind.__name__}")
    elif is_constant(value):
        _equal(gs, src, value)
    elif isinstance(value, Tensor):
        _any_tensor(gs, src, tensor_meta(value), plan, tensor_layout(value))
        _tensor_attributes(gs, src, value)
    elif _other_value(gs, src, value):
        pass
    elif isinstance(value, (list, tuple, dict)) and depth >= MAX_DEPTH:
        frozen = _frozen(value)  # deeper than the item guards go: the whole structure
        gs.add(lambda ctx: _frozen(src.get(ctx)) == frozen, f"{src} unchanged (deep)")
    elif isinstance(value, (list, tuple, dict)):
        old, mutated = before
        if id(value) in mutated:
            return  # a log the region only appends to: replayed, not guarded (D)
        kind = type(value)
        value = old.get(id(value), value)
        n = len(value)
        if kind is dict:  # (the keys' order is what iterating the dict sees)
            keys = tuple(value)
            gs.add(lambda ctx: type(v := src.get(ctx)) is kind and tuple(v) == keys,
                   f"type({src}) is dict and keys == {keys!r}")
        else:
            gs.add(lambda ctx: type(v := src.get(ctx)) is kind and len(v) == n,
                   f"type({src}) is {kind.__name__} and len == {n}")
        items = value.items() if isinstance(value, dict) else enumerate(value)
        for key, item in items:
            if is_constant(key):
                _arg_guards(gs, src.child(("item", key)), item, depth + 1, plan, before)
    elif _by_identity(value):
        gs.add(lambda ctx: src.get(ctx) is value, f"{src} is {value!r}")
    elif not isinstance(value, (types.FunctionType, functools.partial, types.MethodType,
                                types.ModuleType)):
        # a user object or a module: TYPE_MATCH (its attributes: `attr_reads`; a module's
        # flags, hooks and submodules: `_module_guards`)
        kind = type(value)
        gs.add(lambda ctx: type(src.get(ctx)) is kind, f"type({src}) is {kind.__name__}")


_MAX_GUARDED_ARRAY = 4096


def _array(gs: GuardSet, src: Source, value: np.ndarray) -> None:
    """A NumPy array argument is read as numbers (``float(a[0])``): guarded by value when
    small, else nothing a guard can afford checks it (eager)."""
    if value.size > _MAX_GUARDED_ARRAY or value.dtype == object:
        gs.unguardable.append(f"{src} is a large NumPy array (its values are not guarded)")
        return
    copy = value.copy()
    gs.add(lambda ctx: type(v := src.get(ctx)) is np.ndarray and v.dtype == copy.dtype
           and v.shape == copy.shape and bool(np.array_equal(v, copy)), f"{src} == {copy!r}")


def _is_iterator(value: Any) -> bool:
    return isinstance(value, types.GeneratorType) or (
        hasattr(type(value), "__next__") and not isinstance(value, Tensor))


def _frozen(value: Any) -> Any:
    """A comparable picture of a nested container: types, lengths, keys, constants by value,
    anything else by identity."""
    if isinstance(value, (list, tuple)):
        return (type(value), tuple(_frozen(v) for v in value))
    if isinstance(value, dict):
        return (dict, tuple((k, _frozen(v)) for k, v in value.items()))
    if is_constant(value):
        return (type(value), value)
    return ("id", id(value))


def _public_attributes(t: Tensor) -> dict:
    return {k: v for k, v in t.__dict__.items() if k[:1] != "_"}


def _tensor_attributes(gs: GuardSet, src: Source, t: Tensor) -> None:
    """Python attributes a user set on a tensor argument (``x.tag = 4``) are values the code
    may read (``getattr(x, "tag", 1)``): their names, and the constant ones' values, are
    guarded (hookgrad's own fields start with ``_``). The common case, none, is one scan of
    a small dictionary."""
    public = _public_attributes(t)
    if not public:
        gs.add(lambda ctx: all(k[:1] == "_" for k in src.get(ctx).__dict__),
               f"{src} has no Python attributes")
        return
    names = set(public)
    consts = {k: v for k, v in public.items() if is_constant(v)}

    def check(ctx: CallContext) -> bool:
        now = _public_attributes(src.get(ctx))
        return now.keys() == names and all(
            type(now[k]) is type(v) and now[k] == v for k, v in consts.items())
    gs.add(check, f"{src} Python attributes {sorted(names)}")


def _other_value(gs: GuardSet, src: Source, value: Any) -> bool:
    """Values compared by identity or value that are not plain constants: classes, NumPy
    scalars and small arrays (PyTorch guards them too); an iterator cannot be guarded (what
    the trace drew from it is gone). True when handled."""
    if isinstance(value, (enum.Enum, type)):
        gs.add(lambda ctx: src.get(ctx) is value, f"{src} is {value!r}")
        return True
    if isinstance(value, np.generic):
        kind = type(value)
        gs.add(lambda ctx: type(v := src.get(ctx)) is kind and bool(v == value),
               f"{src} == {value!r}")
        return True
    if isinstance(value, np.ndarray):
        _array(gs, src, value)
        return True
    if _is_iterator(value):
        gs.unguardable.append(f"{src} is an iterator (what the trace drew from it is gone)")
        return True
    return False


_NO_CELL = object()


def _function_guards(gs: GuardSet, trace: Any) -> None:
    old_cells = {id(cell): old for cell, old in trace.snapshot.cells}
    old_globals = {id(g): old for g, old in trace.snapshot.globals}
    entry = trace.fn  # the entry's own cells and globals (its code is the cache key)
    for i, cell in enumerate(getattr(entry, "__closure__", None) or ()):
        old = old_cells.get(id(cell), _NO_CELL)  # (a cell holding None is guarded too)
        if old is not _NO_CELL and is_constant(old):
            _equal(gs, Source(("C", i)), old)
        elif old is not _NO_CELL:
            _other_value(gs, Source(("C", i)), old)
    _global_guards(gs, entry, old_globals)
    for src, value in list(trace.index.by_id.values()):
        if not isinstance(value, types.FunctionType) or value.__code__ not in trace.called_codes:
            continue
        code = value.__code__
        if not any(kind == "nth" for kind, _key in src.steps):
            # (a hook read from a hook dict: that dict's guard already compares hook codes)
            gs.add(lambda ctx, s=src, c=code: s.get(ctx).__code__ is c,
                   f"{src}.__code__ is {code.co_name}")
        for i, cell in enumerate(value.__closure__ or ()):
            old = old_cells.get(id(cell), _NO_CELL)
            if old is not _NO_CELL and is_constant(old):
                _equal(gs, src.child(("cell", i)), old)
            elif old is not _NO_CELL:
                _other_value(gs, src.child(("cell", i)), old)
        _default_guards(gs, src, value)
        _global_guards(gs, value, old_globals)
        if src.steps and src.steps[-1] == ("attr", "func"):
            _partial_guards(gs, Source(src.root, src.steps[:-1]), trace)


def _default_guards(gs: GuardSet, src: Source, fn: Any) -> None:
    """The default arguments of a called function (``def helper(x, k=1.0)``, then
    ``helper.__defaults__ = (2.0,)``): constants by value, other objects by identity (the
    entry's own defaults are bound into the call's arguments and guarded there)."""
    for name in ("__defaults__", "__kwdefaults__"):
        value = getattr(fn, name)
        if not value:
            gs.add(lambda ctx, n=name: not getattr(src.get(ctx), n), f"not {src}.{name}")
            continue
        frozen = _frozen(value)
        gs.add(lambda ctx, n=name, f=frozen: _frozen(getattr(src.get(ctx), n)) == f,
               f"{src}.{name} unchanged")


def _global_guards(gs: GuardSet, fn: Any, old_globals: dict) -> None:
    """Constant globals the code of `fn` names (values from before the trace)."""
    g = old_globals.get(id(getattr(fn, "__globals__", None)), {})
    for name in fn.__code__.co_names:
        if name in g and is_constant(g[name]):
            _equal(gs, Source(("G", fn.__globals__, name)), g[name])
        elif name in g:
            _other_value(gs, Source(("G", fn.__globals__, name)), g[name])


def _partial_guards(gs: GuardSet, src: Source, trace: Any) -> None:
    try:
        part = src.get(trace.ctx)
    except Exception:  # noqa: BLE001 - rebound during the trace: nothing to guard against
        return
    if not isinstance(part, functools.partial):
        return
    gs.add(lambda ctx: type(src.get(ctx)) is functools.partial, f"type({src}) is partial")
    for key, value in part.keywords.items():
        if is_constant(value):
            _equal(gs, src.child(("attr", "keywords")).child(("item", key)), value)
    for i, value in enumerate(part.args):
        if is_constant(value):
            _equal(gs, src.child(("attr", "args")).child(("item", i)), value)


def _module_guards(gs: GuardSet, trace: Any, skip_empty: bool) -> None:
    """One guard per module (its ``training`` flag and hook dicts) and one per global dict.
    A hook dict is guarded as it was before the trace: a hook the region registers (replayed
    after the graph) makes the next call's dict differ from what the trace saw."""
    old = _containers_before(trace)[0]
    for src, value in list(trace.index.by_id.values()):
        if not isinstance(value, Module):
            continue
        training = value.training
        dicts = []
        for name in _HOOK_DICTS:
            registry = vars(value).get(name)
            if registry is None or (skip_empty and not registry):
                continue
            dicts.append((name, _hooks_unchanged(hook_signature(old.get(id(registry),
                                                                        registry)))))
        # an instance ``forward`` (set, replaced or deleted after the trace) changes what the
        # call runs: guarded by identity, like the class's forward by the code key
        forward = vars(value).get("forward")
        gs.add(_module_check(src, training, tuple(dicts), forward, _module_tables(value)),
               f"{src}.training == {training}, its instance forward, submodules, parameter "
               f"and buffer names and its hook dicts {[n for n, _c in dicts]} unchanged")
    for name in _GLOBAL_DICTS:
        registry = getattr(_gh, name)
        if skip_empty and not registry:
            continue
        sig = hook_signature(registry)
        unchanged = _hooks_unchanged(sig)
        gs.add(lambda ctx, r=registry, u=unchanged: u(r),
               f"global module hooks {name} unchanged ({len(sig)} hooks)")


def _module_tables(mod: Module) -> tuple:
    """A module's submodules (by identity: ``m.act = Tanh()``, ``seq.append(...)``, a
    replaced ``seq[1]``), and its parameter and buffer names with which of them are None
    (``m.bias = None``; the tensors themselves are graph inputs, fetched on every call)."""
    d = mod.__dict__
    mods = d.get("_modules", {})
    return (tuple(mods), tuple(mods.values()),
            *(_names_and_nones(d.get(table, {})) for table in ("_parameters", "_buffers")))


def _names_and_nones(table: dict) -> tuple:
    return tuple(table), tuple([v is None for v in table.values()])


def _tables_unchanged(d: dict, tables: tuple) -> bool:
    """`_module_tables` of the module whose ``__dict__`` is `d` still holds (this runs for
    every module on every call: plain comprehensions, the fastest form measured)."""
    keys, subs, params, buffers = tables
    mods = d.get("_modules", _EMPTY)
    if len(mods) != len(subs):
        return False
    if subs and (tuple(mods) != keys
                 or False in [a is b for a, b in zip(mods.values(), subs)]):
        return False
    return (_names_and_nones(d.get("_parameters", _EMPTY)) == params
            and _names_and_nones(d.get("_buffers", _EMPTY)) == buffers)


_EMPTY: dict = {}


def _module_check(src: Source, training: bool, dicts: tuple,
                  forward: Any, tables: tuple) -> Callable[..., bool]:
    pairs = tuple((name, unchanged, unchanged.passed) for name, unchanged in dicts)

    def check(ctx: CallContext) -> bool:
        mod = src.get(ctx)
        if mod.training != training:
            return False
        d = mod.__dict__
        if d.get("forward") is not forward or not _tables_unchanged(d, tables):
            return False
        for name, unchanged, passed in pairs:
            registry = d[name]
            hit = passed.get(id(registry))  # the version fast path, inlined (hot)
            if (hit is None or hit[1] != registry._version or hit[0]() is not registry) \
                    and not unchanged(registry):
                return False
        return True
    return check


def _hooks_unchanged(sig: tuple) -> Any:
    """Guard of one hook dict (spec §6.5, D): ``HookRegistry._version`` first (O(1)); only when
    it moved since this guard last passed for that registry are the hooks compared by code, so
    re-registering a hook of the same code still reuses the artifact."""
    passed: dict[int, tuple[Any, int]] = {}  # id(registry) -> (weak ref, version that passed)

    def check(registry: Any) -> bool:
        version = getattr(registry, "_version", None)
        hit = passed.get(id(registry))
        if hit is not None and hit[1] == version and version is not None \
                and hit[0]() is registry:
            return True
        if hook_signature(registry) != sig:
            return False
        if version is not None:
            if len(passed) > 64:  # modules come and go: keep the memo small
                passed.clear()
            passed[id(registry)] = (weakref.ref(registry), version)
        return True
    check.passed = passed  # type: ignore[attr-defined]
    return check
