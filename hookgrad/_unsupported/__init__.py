"""Stand-ins for PyTorch subsystems hookgrad deliberately does not provide, made from one table.

Tools import ``torch.xpu``, ``torch.sparse``, ``torch.nn.quantized``, ``torch.testing.FileCheck``
(and the like) at load time, usually only to probe availability, name a type in an
``isinstance`` check or register a hook. Each row of `hookgrad._unsupported.table` makes such
names exist; using an entry point raises the error PyTorch raises on a CPU-only build where
PyTorch raises there, and ``NotImplementedError`` naming the subsystem where PyTorch would work.

Every stand-in carries ``__hookgrad_unsupported__ = "<reason>"`` so the census can count it as
present but not implemented (``python3 -m tests.census`` prints both figures).

Kinds of rows (`make`):

- ``function`` / ``method``: a callable that raises (a method is set on a class: ``Tensor.xpu``).
- ``class``: a class that can be named, subclassed and used in ``isinstance`` (nothing is ever
  an instance of it), whose instantiation raises.
- ``module``: a module object registered in ``sys.modules`` (so ``import torch.sparse`` works);
  ``open`` modules answer every public attribute with a raising class (the quantized ``nn``
  namespaces, whose class lists PyTorch keeps growing), closed ones hold only their rows.
- ``layout``: a ``torch.layout`` value no hookgrad tensor can have.
- ``constant``: a named value of a stand-in type (``torch.per_tensor_affine`` of ``qscheme``).
- ``dtype``: a ``torch.dtype`` value; a tensor of it cannot be made (TypeError, as complex64).
"""

from __future__ import annotations

import importlib
import sys
import types
from typing import Any

from hookgrad._unsupported.table import GROUPS, Group

__all__ = ["MARK", "make", "install", "is_unsupported", "standins"]

MARK = "__hookgrad_unsupported__"
_MADE: list[tuple[str, str, Any]] = []  # (owner path, name, stand-in) in install order


def is_unsupported(obj: Any) -> bool:
    """Whether `obj` is a stand-in made here (a marked function, class, module or value)."""
    try:
        return isinstance(getattr(obj, MARK, None), str)
    except Exception:  # noqa: BLE001 - an object whose attribute access raises is not ours
        return False


def _torch_path(path: str) -> str:
    return "torch" + path[len("hookgrad"):] if path.startswith("hookgrad") else path


def _function(owner: str, name: str, group: Group) -> Any:
    error, message = group.error, group.message.format(name=f"{_torch_path(owner)}.{name}")

    def standin(*args: Any, **kwargs: Any) -> Any:
        raise error(message)

    standin.__name__ = name
    owner_name = owner.rsplit(".", 1)[-1]
    standin.__qualname__ = name if group.kind == "function" else f"{owner_name}.{name}"
    standin.__module__ = _torch_path(owner)
    standin.__doc__ = (f"Unsupported in hookgrad: ``{_torch_path(owner)}.{name}`` raises "
                       f"{error.__name__}.")
    setattr(standin, MARK, message)
    standin.__hookgrad_error__ = error
    return standin


class _StandInMeta(type):
    """Metaclass of class stand-ins: instantiation raises the row's error; no instances exist."""

    def __call__(cls, *args: Any, **kwargs: Any) -> Any:
        raise cls.__hookgrad_error__(getattr(cls, MARK))

    def __instancecheck__(cls, obj: Any) -> bool:
        return False


def _class(owner: str, name: str, group: Group) -> type:
    message = group.message.format(name=f"{_torch_path(owner)}.{name}")
    return _StandInMeta(name, (), {
        "__module__": _torch_path(owner), "__qualname__": name, MARK: message,
        "__hookgrad_error__": group.error,
        "__doc__": f"Unsupported in hookgrad: ``{_torch_path(owner)}.{name}`` raises "
                   f"{group.error.__name__} when instantiated."})


class _StandInModule(types.ModuleType):
    """A module stand-in; an ``open`` one makes a raising class for any public attribute."""

    def __getattr__(self, name: str) -> Any:
        group = self.__dict__.get("_open_group")
        if group is None or name.startswith("_") or name.startswith("pytest"):
            raise AttributeError(f"module {self.__name__!r} has no attribute {name!r}")
        cls = _class(self.__name__, name, group)
        setattr(self, name, cls)
        return cls


def _module(owner: str, name: str, group: Group) -> types.ModuleType:
    path = f"{owner}.{name}"
    existing = sys.modules.get(path)
    if existing is not None:
        return existing
    mod = _StandInModule(path, f"Unsupported in hookgrad: ``{_torch_path(path)}``. "
                                "Mirrors its import path only; its entry points raise.")
    setattr(mod, MARK, group.message.format(name=_torch_path(path)))
    mod.__path__ = []  # a package: its stand-in submodules import; nothing is searched for
    if group.open:
        mod._open_group = group
    sys.modules[path] = mod
    return mod


def _layout(owner: str, name: str, group: Group) -> Any:
    from hookgrad._legacy import layout
    marked = type("layout", (layout,), {"__slots__": (), "__module__": "torch",
                                        MARK: group.message.format(name=f"torch.{name}")})
    return marked(name)


def _dtype(owner: str, name: str, group: Group) -> Any:
    import numpy as np

    from hookgrad._dtypes import dtype
    marked = type("dtype", (dtype,), {"__slots__": (), "__module__": "torch",
                                      MARK: group.message.format(name=f"torch.{name}")})
    from hookgrad._dtypes import _COMPLEX, _FLOAT, _INT
    # so is_floating_point / is_complex answer as PyTorch's
    category = _FLOAT if name.startswith("float") else _COMPLEX if name.startswith(
        "complex") else _INT
    return marked(name, np.uint8, category, name.capitalize() + "Tensor")


_CONSTANT_TYPES: dict[tuple[str, str], type] = {}


def _constant(owner: str, name: str, group: Group) -> Any:
    """A named value of the stand-in type ``group.typename`` (``torch.per_tensor_affine`` of
    ``torch.qscheme``); the type is set on the owner too unless it has a real one."""
    key = (owner, group.typename)
    if key not in _CONSTANT_TYPES:
        _CONSTANT_TYPES[key] = type(group.typename, (), {
            "__slots__": ("name",), "__module__": _torch_path(owner),
            "__repr__": lambda self: f"torch.{self.name}",
            "__reduce__": lambda self: self.name,
            MARK: group.message.format(name=f"{_torch_path(owner)}.{group.typename}"),
            "__doc__": f"Unsupported in hookgrad: the ``torch.{group.typename}`` values."})
        holder = _resolve(owner)
        if not hasattr(holder, group.typename):
            setattr(holder, group.typename, _CONSTANT_TYPES[key])
    value = object.__new__(_CONSTANT_TYPES[key])
    value.name = name
    return value


_MAKERS = {"function": _function, "method": _function, "class": _class, "module": _module,
           "layout": _layout, "dtype": _dtype, "constant": _constant}


def make(owner: str, name: str, group: Group) -> Any:
    """The stand-in for `owner.name` described by `group` (see the module docstring)."""
    return _MAKERS[group.kind](owner, name, group)


def _resolve(path: str) -> Any:
    """The object at the hookgrad path `path` (a module, or a class such as ``hookgrad.Tensor``)."""
    if path in sys.modules:
        return sys.modules[path]
    try:
        return importlib.import_module(path)
    except ImportError:
        head, _, attr = path.rpartition(".")
        return getattr(_resolve(head), attr)


def install(groups: tuple[Group, ...] = GROUPS) -> None:
    """Set every row's stand-in on its owner, keeping any real object already there."""
    for group in groups:
        owner = _resolve(group.owner)
        for name in group.names.split():
            # a real implementation (or an earlier row) wins; an open stand-in module answers
            # every name, so only what is really set on it counts there
            inherited = not isinstance(owner, _StandInModule) and group.kind != "method"
            if name in getattr(owner, "__dict__", {}) or (inherited and hasattr(owner, name)):
                continue
            obj = make(group.owner, name, group)
            setattr(owner, name, obj)
            _MADE.append((group.owner, name, obj))


def standins() -> list[tuple[str, str, Any]]:
    """(owner path, name, stand-in) of every stand-in `install` set."""
    return list(_MADE)
