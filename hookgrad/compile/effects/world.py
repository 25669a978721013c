"""Snapshots of the Python state a traced call can mutate: diff (side effects) and rollback.

The tracer runs the user's code on real values (NOTE [Execution tracing] in `tracer`), so a
mutation of pre-existing state really happens during the trace. Comparing a snapshot taken
before with the state after yields the side-effect log (spec §7.1), and restoring the snapshot
undoes a failed trace (spec §3.1: "a trace that fails leaves the world untouched").
"""

from __future__ import annotations

import collections
import types
from typing import Any

from hookgrad._tensor import Tensor
from hookgrad.compile.core.sources import SourceIndex, _cell_filled, is_user_class

__all__ = ["Change", "WorldSnapshot"]

_EMPTY = object()  # an unset attribute / empty cell / missing global


class Change:
    """One mutation: where (``kind``, ``owner``, ``key``), the value before and after."""

    __slots__ = ("kind", "owner", "key", "old", "new")

    def __init__(self, kind: str, owner: Any, key: Any, old: Any, new: Any) -> None:
        self.kind = kind  # "attr" | "list" | "dict" | "cell" | "global" | "class"
        self.owner = owner
        self.key = key
        self.old = old
        self.new = new

    def __repr__(self) -> str:
        return f"Change({self.kind}, {self.key!r}: {self.old!r} -> {self.new!r})"


def _has_state_dict(value: Any) -> bool:
    return (hasattr(value, "__dict__") and not isinstance(value, (types.FunctionType, type,
            types.ModuleType, Tensor, types.MethodType)))


class WorldSnapshot:
    """Shallow copies of every list, dict, object ``__dict__``, cell and globals dict indexed."""

    def __init__(self, indexes: list[SourceIndex]) -> None:
        self.lists: list[tuple[list, list]] = []
        self.dicts: list[tuple[dict, dict]] = []
        self.objs: list[tuple[Any, dict]] = []
        self.cells: list[tuple[Any, Any]] = []
        self.globals: list[tuple[dict, dict]] = []
        self.classes: list[tuple[type, dict]] = []  # user classes: attribute writes break
        # deques, sets, byte arrays, mapping proxies: compared whole by the guards (a change
        # the region made to one is not replayed: the guards make that frame eager)
        self.others: list[tuple[int, Any]] = []
        seen: set[int] = set()
        for index in indexes:
            for _src, value in index.by_id.values():
                if id(value) not in seen:
                    seen.add(id(value))
                    self._take(value)
            for _src, cell in index.cells.values():
                if id(cell) not in seen:
                    seen.add(id(cell))
                    self.cells.append((cell, cell.cell_contents if _cell_filled(cell)
                                       else _EMPTY))
            for g in index.globals_dicts.values():
                if id(g) not in seen:
                    seen.add(id(g))
                    self.globals.append((g, dict(g)))

    def _take(self, value: Any) -> None:
        if isinstance(value, type):
            if is_user_class(value):
                self.classes.append((value, dict(vars(value))))
            return
        if isinstance(value, list):
            self.lists.append((value, list(value)))
        elif isinstance(value, _OTHERS):
            self.others.append((id(value), freeze_container(value)))
        elif isinstance(value, dict) and not isinstance(value, types.MappingProxyType):
            self.dicts.append((value, dict(value)))
        elif _has_state_dict(value):
            self.objs.append((value, dict(vars(value))))

    def diff(self) -> list[Change]:
        """Every mutation since the snapshot, grouped by kind."""
        out: list[Change] = []
        for lst, old in self.lists:
            if len(lst) != len(old) or any(a is not b for a, b in zip(lst, old)):
                out.append(Change("list", lst, None, old, list(lst)))
        for d, old in self.dicts:
            if d.keys() != old.keys() or any(d[k] is not old[k] for k in old):
                out.append(Change("dict", d, None, old, dict(d)))
        for obj, old in self.objs:
            new = vars(obj)
            for key in old.keys() | new.keys():
                a, b = old.get(key, _EMPTY), new.get(key, _EMPTY)
                if a is not b and not (type(a) is type(b) and _const_eq(a, b)):
                    out.append(Change("attr", obj, key, a, b))
        for cls, old in self.classes:
            new = vars(cls)
            for key in old.keys() | new.keys():
                if key.startswith("__"):
                    continue
                a, b = old.get(key, _EMPTY), new.get(key, _EMPTY)
                if a is not b and not (type(a) is type(b) and _const_eq(a, b)):
                    out.append(Change("class", cls, key, a, b))
        for cell, old in self.cells:
            new = cell.cell_contents if _cell_filled(cell) else _EMPTY
            if new is not old and not (type(new) is type(old) and _const_eq(new, old)):
                out.append(Change("cell", cell, None, old, new))
        for g, old in self.globals:
            for key in old.keys() | g.keys():
                if key.startswith("__"):
                    # module dunders are no user state; other tools (PyTorch's compiler
                    # finalizers) add and drop ``__compiled_fn_*`` names at any GC
                    continue
                a, b = old.get(key, _EMPTY), g.get(key, _EMPTY)
                if a is not b and not (type(a) is type(b) and _const_eq(a, b)):
                    out.append(Change("global", g, key, a, b))
        return out

    def restore(self) -> None:
        """Put every snapshotted location back (rollback of a failed trace)."""
        for lst, old in self.lists:
            lst[:] = old
        for d, old in self.dicts:
            if d.keys() != old.keys() or any(d[k] is not old[k] for k in old):
                d.clear()
                d.update(old)
        for obj, old in self.objs:
            cur = vars(obj)
            if len(cur) != len(old) or any(cur.get(k, _EMPTY) is not v for k, v in old.items()):
                cur.clear()
                cur.update(old)
        for cls, old in self.classes:
            for key in [k for k in vars(cls) if k not in old and not k.startswith("__")]:
                delattr(cls, key)
            for key, value in old.items():
                if not key.startswith("__") and vars(cls).get(key, _EMPTY) is not value:
                    setattr(cls, key, value)
        for cell, old in self.cells:
            if old is _EMPTY:
                if _cell_filled(cell):
                    del cell.cell_contents
            elif not _cell_filled(cell) or cell.cell_contents is not old:
                cell.cell_contents = old
        for g, old in self.globals:
            for key in list(g.keys() - old.keys()):
                if not key.startswith("__"):
                    del g[key]
            for key, value in old.items():
                if not key.startswith("__") and g.get(key, _EMPTY) is not value:
                    g[key] = value


_OTHERS = (collections.deque, set, frozenset, bytearray, types.MappingProxyType)


def freeze_container(value: Any) -> Any:
    """A comparable copy of a deque, set, byte array or mapping proxy (items by value when
    they are plain constants, else by identity)."""
    if isinstance(value, (set, frozenset)):
        return (type(value), frozenset(_item(v) for v in value))
    if isinstance(value, types.MappingProxyType):
        return (type(value), tuple((k, _item(v)) for k, v in value.items()))
    if isinstance(value, bytearray):
        return (bytearray, bytes(value))
    return (type(value), tuple(_item(v) for v in value))


def _item(v: Any) -> Any:
    return v if isinstance(v, (int, float, str, bool, bytes, type(None))) else ("id", id(v))


def _const_eq(a: Any, b: Any) -> bool:
    if isinstance(a, (int, float, str, bool, type(None))):
        return a == b
    return False


EMPTY = _EMPTY
