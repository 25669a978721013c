"""Names: unique identifiers for nodes and globals, and the public name of each node target.

Node targets are the public objects a user compares against (``operator.add``,
``hookgrad.relu``), so the emitter and printers need the public dotted path of a function that
is defined in a private module (``hookgrad._functional...``). That table is read from the
loaded ``hookgrad`` package (``sys.modules``): the public namespace is assembled by
``hookgrad/__init__`` above every layer, so it is looked up at run time, never imported.
"""

from __future__ import annotations

import builtins
import keyword
import math
import re
import sys
import types
from collections import defaultdict
from typing import Any

__all__ = ["Namespace", "qualified_name", "public_functions", "snake_case", "CUSTOM_BUILTINS"]

# The public namespaces whose functions are node targets, in order of preference for a name.
PUBLIC_NAMESPACES = ("hookgrad", "hookgrad.nn.functional", "hookgrad.linalg", "hookgrad.special",
                     "hookgrad.fft")

# Names the generated code may use without an entry in its globals.
CUSTOM_BUILTINS: dict[str, Any] = {"inf": math.inf, "nan": math.nan, "NoneType": type(None)}

_ILLEGAL = re.compile(r"[^0-9a-zA-Z_]+")
_SUFFIX = re.compile(r"(.*)_(\d+)$")
_CAMEL = re.compile(r"(?<=[a-z])([A-Z])")


def snake_case(s: str) -> str:
    """``fooBar`` -> ``foo_bar`` (node names are derived from targets this way)."""
    return _CAMEL.sub(r"_\1", s).lower()


class Namespace:
    """Hands out unique, legal Python identifiers, one per object.

    Mirrors: ``torch.fx.graph._Namespace``.
    """

    def __init__(self) -> None:
        self._obj_to_name: dict[int, str] = {}
        self._used: set[str] = set()
        self._base_count: dict[str, int] = defaultdict(int)

    def create_name(self, candidate: str, obj: Any) -> str:
        """A fresh identifier close to `candidate` (or `obj`'s existing one)."""
        if obj is not None and id(obj) in self._obj_to_name:
            return self._obj_to_name[id(obj)]
        candidate = _ILLEGAL.sub("_", candidate) or "_unnamed"
        if candidate[0].isdigit():
            candidate = f"_{candidate}"
        match = _SUFFIX.match(candidate)
        base, num = (candidate, None) if match is None else (match[1], int(match[2]))
        candidate = base if num is None else f"{base}_{num}"
        if not num:
            num = self._base_count[base]
        while candidate in self._used or self._is_illegal(candidate, obj):
            num += 1
            candidate = f"{base}_{num}"
        self._used.add(candidate)
        self._base_count[base] = num
        if obj is not None:
            self._obj_to_name[id(obj)] = candidate
        return candidate

    def associate_name_with_obj(self, name: str, obj: Any) -> None:
        """Make `obj` map to the already created `name`."""
        self._obj_to_name[id(obj)] = name

    def _rename_object(self, obj: Any, name: str) -> None:
        self._obj_to_name[id(obj)] = name

    @staticmethod
    def _is_illegal(name: str, obj: Any) -> bool:
        if name in keyword.kwlist:
            return True
        if name in builtins.__dict__:
            return obj is not builtins.__dict__[name]
        if name == "hookgrad":
            return obj is not sys.modules.get("hookgrad")
        return name in CUSTOM_BUILTINS and obj is not CUSTOM_BUILTINS[name]

    def copy(self) -> Namespace:
        """An independent copy (the emitter names globals without touching the graph's)."""
        out = Namespace()
        out._obj_to_name = dict(self._obj_to_name)
        out._used = set(self._used)
        out._base_count = defaultdict(int, self._base_count)
        return out


_PUBLIC: dict[int, str] = {}


def public_functions() -> dict[int, str]:
    """``id(function) -> "hookgrad.relu"`` for the callables of the public namespaces."""
    if not _PUBLIC and "hookgrad" in sys.modules:
        for ns_name in PUBLIC_NAMESPACES:
            ns = sys.modules.get(ns_name)
            for name, obj in vars(ns).items() if ns is not None else ():
                if name.startswith("_") or not callable(obj) or isinstance(obj, type):
                    continue
                obj = getattr(obj, "__fx_original__", obj)  # built during a trace: unpatch
                if isinstance(obj, (types.FunctionType, types.BuiltinFunctionType)):
                    _PUBLIC.setdefault(id(obj), f"{ns_name}.{name}")
    return _PUBLIC


def qualified_name(func: Any) -> str:
    """The dotted path a reader knows `func` by (``operator.add``, ``hookgrad.relu``).

    Mirrors: ``torch.fx.node._get_qualified_name``.
    """
    name = getattr(func, "__name__", None) or type(func).__name__
    if getattr(builtins, name, None) is func:
        return name
    public = public_functions().get(id(func))
    if public is not None:
        return public
    module = getattr(func, "__module__", None) or "builtins"
    if name == "<lambda>":
        raise RuntimeError("Unable to represent lambda")
    return f"{module}.{name}"
