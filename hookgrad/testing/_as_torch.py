"""`as_torch`: run code that does ``import torch`` against hookgrad, then restore.

Third-party tools built on PyTorch (torchinfo, captum, torchviz, pytorch-grad-cam) are tried on
hookgrad with only the import swapped: inside the context, ``import torch`` and any
``import torch.<sub>`` resolve to ``hookgrad`` and ``hookgrad.<sub>`` (the same module objects,
so classes are not duplicated), and modules of the listed tools are re-imported so they bind to
hookgrad. On exit every ``torch*`` entry and the tools' modules are put back as they were, so the
real PyTorch (if it was imported) is untouched.

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
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from types import ModuleType
from typing import Any

import hookgrad

__all__ = ["as_torch"]


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


@contextmanager
def as_torch(tools: Sequence[str] = ()) -> Iterator[ModuleType]:
    """Alias ``torch`` to hookgrad and re-import the modules of `tools` (package names)."""
    prefixes = ("torch", *tools)
    saved = {k: v for k, v in sys.modules.items() if _owned(k, prefixes)}
    for k in saved:
        del sys.modules[k]
    finder = _TorchToHookgrad()
    sys.modules["torch"] = hookgrad
    for name, mod in list(sys.modules.items()):
        if name.startswith("hookgrad."):
            sys.modules["torch" + name[len("hookgrad"):]] = mod
    sys.meta_path.insert(0, finder)
    try:
        yield hookgrad
    finally:
        sys.meta_path.remove(finder)
        for k in [k for k in sys.modules if _owned(k, prefixes)]:
            del sys.modules[k]
        sys.modules.update(saved)
