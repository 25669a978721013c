"""Which attributes of pre-existing objects a trace read (spec §6.1: "user object: type, then
whatever attributes were read").

NOTE [Attribute reads]
The tracer executes the user's code (NOTE [Execution tracing] in `tracer`), so a constant read
from an object (``x * cfg.scale``) is baked into the graph as a number. A later call with
``cfg.scale`` changed must recompile, as PyTorch's guards make it (checked: every changed
attribute read gave a new frame). To know what was read, every plain object and module with a
source is given, for the duration of the trace only, a subclass of its own class whose
``__getattribute__`` notes the names read (``__class__`` is restored when the trace ends,
whatever happens; meanwhile ``obj.__class__`` answers the user's class and only ``type(obj)``
shows the subclass). The guards then compare each read attribute's value from before the trace
(instance dictionary or class attribute) and the object's type.
"""

from __future__ import annotations

import types
from typing import Any

from hookgrad._tensor import Tensor
from hookgrad.compile.sources import Source, is_constant
from hookgrad.compile.state import current_trace
from hookgrad.nn.modules.module import Module
from hookgrad.utils.hooks import HookRegistry, RemovableHandle

__all__ = ["AttrReads"]

_SUBCLASSES: dict[type, type] = {}
_SKIP_TYPES = (Tensor, type, types.ModuleType, types.FunctionType, types.MethodType,
               types.BuiltinFunctionType, HookRegistry, RemovableHandle, dict, list, tuple)


def _tracking(cls: type) -> type:
    sub = _SUBCLASSES.get(cls)
    if sub is None:
        base_get = cls.__getattribute__

        def __getattribute__(self: Any, name: str) -> Any:
            value = base_get(self, name)
            if name[:2] != "__":
                tr = current_trace()
                if tr is not None and tr.recording and tr.attr_reads is not None:
                    tr.attr_reads.note(self, name)
            return value
        # ``obj.__class__`` still answers the user's class (dataclass ``__eq__``, ``copy``,
        # ``__reduce_ex__`` ask it); only ``type(obj)`` shows the tracking subclass
        sub = _SUBCLASSES[cls] = type(cls)(cls.__name__, (cls,), {
            "__getattribute__": __getattribute__, "__module__": cls.__module__,
            "__qualname__": cls.__qualname__, "_hookgrad_tracking": True,
            "__class__": property(lambda self, cls=cls: cls)})
    return sub


_SET_CLASS = object.__dict__["__class__"].__set__  # past the tracking class's read-only property


def _instrumentable(value: Any) -> bool:
    if isinstance(value, _SKIP_TYPES) or not hasattr(value, "__dict__"):
        return False
    cls = type(value)
    if cls.__module__.startswith("hookgrad.") and not isinstance(value, Module):
        return False  # hookgrad's own objects (contexts, handles...): nothing user-tunable
    return "_hookgrad_tracking" not in cls.__dict__


class AttrReads:
    """Notes ``(object, attribute name)`` reads during one trace (see the NOTE)."""

    def __init__(self, index: Any) -> None:
        self.index = index
        self.read: dict[int, tuple[Any, set[str]]] = {}
        self._swapped: list[tuple[Any, type]] = []

    def note(self, obj: Any, name: str) -> None:
        hit = self.read.get(id(obj))
        if hit is None:
            hit = self.read[id(obj)] = (obj, set())
        hit[1].add(name)

    def install(self) -> None:
        for _src, value in list(self.index.by_id.values()):
            if not _instrumentable(value):
                continue
            cls = type(value)
            try:
                _SET_CLASS(value, _tracking(cls))
            except Exception:  # noqa: BLE001 - classes that refuse a subclass (enums, final
                continue  # types, odd layouts): their reads are not guarded
            self._swapped.append((value, cls))

    def uninstall(self) -> None:
        for value, cls in reversed(self._swapped):
            _SET_CLASS(value, cls)
        self._swapped.clear()

    def guards(self, snapshot: Any) -> list[tuple[Source, str, Any]]:
        """``(source, kind, value)``: ``("type", cls)`` or ``("attr", name, value)`` rows."""
        old = {id(obj): d for obj, d in snapshot.objs}
        rows: list[tuple[Source, str, Any]] = []
        for obj, names in self.read.values():
            src = self.index.source_of(obj)
            if src is None:
                continue
            cls = type(obj)
            before = old.get(id(obj), {})
            consts = []
            for name in sorted(names):
                if isinstance(obj, Module) and (name.startswith("_") or name == "training"):
                    continue  # the module call path's own fields: guarded elsewhere
                value = before[name] if name in before else _class_value(cls, name)
                if value is not _NONE and is_constant(value):
                    consts.append((name, value))
            if consts:
                rows.append((src, "type", cls))
                rows.extend((src.child(("attr", n)), "attr", v) for n, v in consts)
        return rows


_NONE = object()


def _class_value(cls: type, name: str) -> Any:
    for klass in cls.__mro__:
        if name in klass.__dict__:
            value = klass.__dict__[name]
            return _NONE if hasattr(value, "__get__") else value
    return _NONE
