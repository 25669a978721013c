"""`as_torch`: run code that does ``import torch`` against hookgrad.

Third-party tools built on PyTorch are tried on hookgrad with only the import swapped: while the
alias is active, ``import torch`` and any ``import torch.<sub>`` resolve to ``hookgrad`` and
``hookgrad.<sub>`` (the same module objects, so classes are not duplicated), and modules of the
listed tools are re-imported so they bind to hookgrad. While aliased, the package is named
``torch`` (``torch.__name__ == "torch"``, as libraries check: pyro's ``patch_dependency`` asserts
that a dotted target starts with the root module's name); its submodules keep their
``hookgrad.<sub>`` names, and ``__package__``/``__spec__`` stay ``hookgrad`` so hookgrad's own
relative imports are unaffected.

`as_torch` is a context manager object with no finaliser: leaving the ``with`` block (or calling
``__exit__``) puts every ``torch*`` entry and the tools' modules back as they were; an alias
entered by hand and never exited stays in place until the interpreter ends, whether or not the
object is still referenced (a generator-based context manager would undo itself when garbage
collected, and print errors when that happens during interpreter shutdown). `install` sets the
alias for the rest of the process, as ``python -m hookgrad.run`` does.

Example:
    >>> import hookgrad
    >>> from hookgrad.testing._as_torch import as_torch
    >>> with as_torch():
    ...     import torch
    ...     torch is hookgrad
    True
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
from collections.abc import Sequence
from types import ModuleType
from typing import Any

import hookgrad

__all__ = ["as_torch", "install"]


def _owned(name: str, prefixes: Sequence[str]) -> bool:
    return any(name == p or name.startswith(p + ".") for p in prefixes)


class _AliasLoader(importlib.abc.Loader):
    def __init__(self, module: ModuleType) -> None:
        self.module = module

    def create_module(self, spec: Any) -> ModuleType:
        return self.module

    def exec_module(self, module: ModuleType) -> None:
        pass


class _TorchToHookgrad(importlib.abc.MetaPathFinder):
    """Resolves ``torch.<sub>`` by importing ``hookgrad.<sub>`` (no second copy is loaded)."""

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> Any:
        if name != "torch" and not name.startswith("torch."):
            return None
        try:
            module = importlib.import_module("hookgrad" + name[len("torch"):])
        except ImportError:
            return None
        return importlib.machinery.ModuleSpec(name, _AliasLoader(module), is_package=hasattr(
            module, "__path__"))


def _alias_modules(prefixes: Sequence[str]) -> _TorchToHookgrad:
    for k in [k for k in sys.modules if _owned(k, prefixes)]:
        del sys.modules[k]
    finder = _TorchToHookgrad()
    sys.modules["torch"] = hookgrad
    hookgrad.__name__ = "torch"
    for name, mod in list(sys.modules.items()):
        if name.startswith("hookgrad."):
            sys.modules["torch" + name[len("hookgrad"):]] = mod
    sys.meta_path.insert(0, finder)
    return finder


class as_torch:  # noqa: N801 - used as a function-like context manager
    """Alias ``torch`` to hookgrad (and re-import the modules of `tools`) until exit."""

    def __init__(self, tools: Sequence[str] = ()) -> None:
        self.prefixes = ("torch", *tools)
        self.saved: dict[str, ModuleType] = {}
        self.finder: _TorchToHookgrad | None = None
        self.saved_name = hookgrad.__name__

    def __enter__(self) -> ModuleType:
        self.saved = {k: v for k, v in sys.modules.items() if _owned(k, self.prefixes)}
        self.saved_name = hookgrad.__name__  # a nested alias leaves the outer one's name
        self.finder = _alias_modules(self.prefixes)
        return hookgrad

    def __exit__(self, *exc: Any) -> bool:
        if self.finder is not None and self.finder in sys.meta_path:
            sys.meta_path.remove(self.finder)
        self.finder = None
        hookgrad.__name__ = self.saved_name
        for k in [k for k in sys.modules if _owned(k, self.prefixes)]:
            del sys.modules[k]
        sys.modules.update(self.saved)
        return False


def install(tools: Sequence[str] = ()) -> None:
    """Alias ``torch`` to hookgrad for the rest of the process (nothing to undo at exit)."""
    if not any(isinstance(f, _TorchToHookgrad) for f in sys.meta_path):
        _alias_modules(("torch", *tools))
