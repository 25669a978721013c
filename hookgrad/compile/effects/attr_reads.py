"""Which attributes of pre-existing objects a trace read (spec §6.1: "user object: type, then
whatever attributes were read").

NOTE [Attribute reads]
The tracer executes the user's code (NOTE [Execution tracing] in `tracer`), so a constant read
from an object (``x * cfg.scale``) is baked into the graph as a number. A later call with
``cfg.scale`` changed must recompile, as PyTorch's guards make it (checked: every changed
attribute read gave a new frame). To know what was read, the *class* of every plain object and
module with a source gets, for the duration of the trace only, a ``__getattribute__`` that notes
the names read on its instances (restored when the trace ends, whatever happens). The class
itself is patched, not swapped for a subclass, so ``type(obj) is Cfg`` stays true inside the
traced code (a subclass swap made that test false and the traced call take the wrong branch).
A class that refuses the patch (C types such as ``SimpleNamespace``) cannot report reads: every
constant attribute of its instances is guarded instead.

The guards then compare the object's type and each read attribute's value from before the
trace (instance dictionary or class attribute).
"""

from __future__ import annotations

import types
from typing import Any

from hookgrad._tensor import Tensor
from hookgrad.compile.core.sources import Source, is_constant, is_user_class
from hookgrad.compile.core.state import current_trace
from hookgrad.nn.modules.module import Module
from hookgrad.utils.hooks import HookRegistry, RemovableHandle

__all__ = ["AttrReads", "has_attribute"]

_SKIP_TYPES = (Tensor, type, types.ModuleType, types.FunctionType, types.MethodType,
               types.BuiltinFunctionType, HookRegistry, RemovableHandle, dict, list, tuple)
_MISSING = object()
_ALL = "*"  # "every attribute": the reads of this object cannot be seen
_MAX_FALLBACK_ATTRS = 32


def _noting(base_get: Any) -> Any:
    def __getattribute__(self: Any, name: str) -> Any:
        if name[:2] != "__":  # noted before the lookup: a read of a missing attribute counts
            tr = current_trace()
            if tr is not None and tr.recording and tr.attr_reads is not None:
                tr.attr_reads.note(self, name)
        return base_get(self, name)
    __getattribute__._hookgrad_noting = True  # type: ignore[attr-defined]
    return __getattribute__


def _instrumentable(value: Any) -> bool:
    if isinstance(value, _SKIP_TYPES):
        return False
    cls = type(value)
    if not hasattr(value, "__dict__"):  # a user class with ``__slots__``: reads are noted
        return "__slots__" in vars(cls) and is_user_class(cls)
    return not (cls.__module__.startswith("hookgrad.") and not isinstance(value, Module))



class AttrReads:
    """Notes ``(object, attribute name)`` reads during one trace (see the NOTE)."""

    def __init__(self, index: Any) -> None:
        self.index = index
        self.read: dict[int, tuple[Any, set[str]]] = {}
        self._patched: list[tuple[type, Any]] = []  # (class, its own __getattribute__ or MISSING)
        self.grads: dict[int, tuple[Tensor, bool]] = {}  # ``t.grad`` reads: (t, it was None)
        self.grad_fns: dict[int, tuple[Tensor, bool]] = {}  # ``grad_fn``/``is_leaf`` reads
        # global settings read through a getter (``get_num_threads()``): (getter, args, value)
        self.settings: dict[tuple, tuple[Any, tuple, Any]] = {}

    def note(self, obj: Any, name: str) -> None:
        hit = self.read.get(id(obj))
        if hit is None:
            hit = self.read[id(obj)] = (obj, set())
        hit[1].add(name)

    def note_grad(self, t: Tensor, was_none: bool) -> None:
        """The trace read ``t.grad`` (the first read's None-ness is what the code saw)."""
        self.grads.setdefault(id(t), (t, was_none))

    def note_grad_fn(self, t: Tensor, was_none: bool) -> None:
        """The trace read ``t.grad_fn`` or ``t.is_leaf`` (an input passed as a leaf on one
        call and as a non-leaf on the next takes the other branch)."""
        self.grad_fns.setdefault(id(t), (t, was_none))

    def note_setting(self, getter: Any, args: tuple, value: Any) -> None:
        """The trace called a global-setting getter; the first value read is guarded."""
        self.settings.setdefault((id(getter), args), (getter, args, value))

    def install(self) -> None:
        done: set[int] = set()
        failed: set[int] = set()
        for _src, value in list(self.index.by_id.values()):
            if not _instrumentable(value):
                continue
            cls = type(value)
            if id(cls) in failed:
                self.note(value, _ALL)
            if id(cls) in done:
                continue
            done.add(id(cls))
            own = cls.__dict__.get("__getattribute__", _MISSING)
            if getattr(own, "_hookgrad_noting", False):
                continue  # an enclosing trace already patched it
            try:
                cls.__getattribute__ = _noting(cls.__getattribute__)  # type: ignore[method-assign]
            except (TypeError, AttributeError):  # a C type: every attribute counts as read
                failed.add(id(cls))
                self.note(value, _ALL)
                continue
            self._patched.append((cls, own))

    def uninstall(self) -> None:
        for cls, own in reversed(self._patched):
            if own is _MISSING:
                del cls.__getattribute__
            else:
                cls.__getattribute__ = own  # type: ignore[method-assign]
        self._patched.clear()

    def guards(self, snapshot: Any) -> list[tuple[Source, str, Any]]:
        """``(source, kind, value)``: ``("type", cls)``, ``("attr", name, value)``,
        ``("unguardable", why)`` (reads no guard can check: the frame runs eagerly),
        ``("absent", name)`` rows (a name the trace looked up that the object did not have:
        ``getattr(obj, "n", 0)`` took its default, so the value read is the absence) and
        ``("grad_is_none", flag)`` rows (a tensor's ``.grad`` the trace read) and
        ``("grad_fn_is_none", flag)`` rows (its ``grad_fn`` or ``is_leaf``)."""
        old = {id(obj): d for obj, d in snapshot.objs}
        rows: list[tuple[Source, str, Any]] = []
        for table, kind in ((self.grads, "grad_is_none"), (self.grad_fns, "grad_fn_is_none")):
            for t, was_none in table.values():
                src = self.index.source_of(t)
                if src is not None:
                    rows.append((src, kind, was_none))
        for obj, names in self.read.values():
            src = self.index.source_of(obj)
            if src is None:
                continue
            cls = type(obj)
            if not hasattr(obj, "__dict__"):  # slots: no snapshot sees their values or writes
                rows.append((src, "unguardable",
                             f"attributes of {cls.__name__} (a class with __slots__) read"))
                continue
            before = old.get(id(obj), {})
            if _ALL in names:
                names = set(list(before)[:_MAX_FALLBACK_ATTRS])
            consts, absent = [], []
            for name in sorted(names):
                if isinstance(obj, Module) and (name.startswith("_") or name == "training"):
                    continue  # the module call path's own fields: guarded elsewhere
                value = before[name] if name in before else _class_value(cls, name)
                if value is not _MISSING and is_constant(value):
                    consts.append((name, value))
                elif name not in before and name != _ALL and not _has(obj, cls, name):
                    if _custom_getattr(cls):  # the value came from user code, not a table
                        rows.append((src, "unguardable",
                                     f"{cls.__name__}.{name} resolved by __getattr__"))
                    else:
                        absent.append(name)
            if consts or absent:
                rows.append((src, "type", cls))
                rows.extend((src.child(("attr", n)), "attr", v) for n, v in consts)
                rows.extend((src, "absent", n) for n in absent)
        return rows


def has_attribute(obj: Any, name: str) -> bool:
    """`name` resolves on `obj` without running code: its instance dictionary, its class
    chain, or (a module) its parameters, buffers and submodules."""
    return name in getattr(obj, "__dict__", ()) or _has(obj, type(obj), name)


def _has(obj: Any, cls: type, name: str) -> bool:
    """`name` resolves through the class chain or a module's own tables."""
    if any(name in klass.__dict__ for klass in cls.__mro__):
        return True
    if isinstance(obj, Module):
        d = obj.__dict__
        return any(name in d.get(k, ()) for k in ("_parameters", "_buffers", "_modules"))
    return False


def _custom_getattr(cls: type) -> bool:
    """The class (not `Module`, whose ``__getattr__`` reads its own tables) defines
    ``__getattr__``: a missing attribute's value is whatever that code returns."""
    hook = getattr(cls, "__getattr__", None)
    return hook is not None and hook is not getattr(Module, "__getattr__", None)


def _class_value(cls: type, name: str) -> Any:
    for klass in cls.__mro__:
        if name in klass.__dict__:
            value = klass.__dict__[name]
            return _MISSING if hasattr(value, "__get__") else value
    return _MISSING
