"""Pickling through an `Importer` (objects of packaged modules keep their demangled names),
tensors through `StorageTable`, and the matching unpickler that imports from a package."""

from __future__ import annotations

import pickle
from collections.abc import Callable
from types import FunctionType
from typing import Any

from hookgrad._tensor import Tensor
from hookgrad.package import _tensors
from hookgrad.package._importers import (
    Importer,
    ObjMismatchError,
    ObjNotFoundError,
    _walk,
)

_GLOBAL = pickle.GLOBAL
_STACK_GLOBAL = pickle.STACK_GLOBAL


class PackagePickler(pickle._Pickler):  # type: ignore[name-defined, misc]
    """A pure-Python pickler: globals resolved by `importer`, tensors as storage records.

    The pure-Python pickler is used because ``save_global`` must be overridden, which the C
    pickler does not allow.

    Mirrors: ``torch.package._package_pickler.PackagePickler``.
    """

    def __init__(self, importer: Importer, table: _tensors.StorageTable, file: Any,
                 protocol: int, persistent_id: Callable[[Any], Any]) -> None:
        super().__init__(file, protocol)
        self.importer = importer
        self._table = table
        self._persistent = persistent_id
        # a copy, so a library that patches pickle's table later does not leak into ours
        self.dispatch = dict(pickle._Pickler.dispatch)  # type: ignore[attr-defined]
        self.dispatch[FunctionType] = PackagePickler.save_global

    def persistent_id(self, obj: Any) -> Any:
        return self._persistent(obj)

    def reducer_override(self, obj: Any) -> Any:
        if isinstance(obj, Tensor):
            return _tensors.reduce_tensor(obj, self._table)
        return NotImplemented

    def save_global(self, obj: Any, name: str | None = None) -> None:
        try:
            module_name, name = self.importer.get_name(obj, name)
        except (ObjNotFoundError, ObjMismatchError) as err:
            raise pickle.PicklingError(f"Can't pickle {obj}: {str(err)}") from None
        module = self.importer.import_module(module_name)
        parent_name, _, last = name.rpartition(".")
        if self.proto >= 4:
            self.save(module_name)
            self.save(name)
            self.write(_STACK_GLOBAL)
        elif parent_name:  # a nested qualname: protocol 3 can only name top-level globals
            self.save_reduce(getattr, (_walk(module, parent_name), last))
        else:
            self.write(_GLOBAL + f"{module_name}\n{name}\n".encode())
        self.memoize(obj)


class _TorchStorageType(str):
    """Stands in for ``torch.FloatStorage`` & co. when reading a PyTorch archive: its dtype."""


def _rebuild_torch_tensor(storage: Any, offset: int, size: tuple, stride: tuple,
                          requires_grad: bool, backward_hooks: Any, metadata: Any = None) -> Any:
    return _tensors._rebuild_tensor(storage, offset, size, stride, requires_grad,
                                    backward_hooks)


_TORCH_GLOBALS = {
    ("torch._utils", "_rebuild_tensor_v2"): _rebuild_torch_tensor,
    ("torch._utils", "_rebuild_parameter"): _tensors._rebuild_parameter,
}


class PackageUnpickler(pickle.Unpickler):
    """Finds classes and functions through a `PackageImporter` instead of ``sys.modules``.

    Mirrors: ``torch.package._package_unpickler.PackageUnpickler``.
    """

    def __init__(self, importer: Importer, file: Any,
                 persistent_load: Callable[[Any], Any]) -> None:
        super().__init__(file)
        self._importer = importer
        self._persistent_load = persistent_load

    def persistent_load(self, pid: Any) -> Any:
        return self._persistent_load(pid)

    def find_class(self, module: str, name: str) -> Any:
        special = _TORCH_GLOBALS.get((module, name))
        if special is not None:
            return special
        if module == "torch" and name in _tensors.TORCH_STORAGE_DTYPES:
            return _TorchStorageType(_tensors.TORCH_STORAGE_DTYPES[name])
        mod = self._importer.import_module(module)
        try:
            return _walk(mod, name)
        except AttributeError:
            raise AttributeError(f"Can't get attribute '{name}' on {mod!r}") from None
