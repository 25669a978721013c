"""``import`` inside packaged code: CPython's ``_bootstrap`` algorithm over a private
``modules`` dict (the rules of ``importlib._bootstrap``: parents first, fromlist handling,
relative names resolved against ``__package__``)."""

from __future__ import annotations

import importlib
import sys
import types
import warnings
from typing import Any

from hookgrad.package._dependencies import resolve_name
from hookgrad.package._mangling import demangle

_NEEDS_LOADING = object()
_ERR_MSG = "No module named {!r}"


def sanity_check(name: Any, package: Any, level: int) -> None:
    """CPython's argument checks of ``__import__``."""
    if not isinstance(name, str):
        raise TypeError(f"module name must be str, not {type(name)}")
    if level < 0:
        raise ValueError("level must be >= 0")
    if level > 0:
        if not isinstance(package, str):
            raise TypeError("__package__ not set to a string")
        if not package:
            raise ImportError("attempted relative import with no known parent package")
    if not name and level == 0:
        raise ValueError("Empty module name")


def calc_package(globals_: dict) -> str:
    """``__package__`` of the importing module (CPython's ``_calc___package__``)."""
    package = globals_.get("__package__")
    spec = globals_.get("__spec__")
    if package is not None:
        if spec is not None and package != spec.parent:
            warnings.warn(f"__package__ != __spec__.parent ({package!r} != {spec.parent!r})",
                          ImportWarning, stacklevel=3)
        return package
    if spec is not None:
        return spec.parent
    warnings.warn("can't resolve package from __spec__ or __package__, falling back on "
                  "__name__ and __path__", ImportWarning, stacklevel=3)
    package = globals_["__name__"]
    if "__path__" not in globals_:
        package = package.rpartition(".")[0]
    return package


class ImportMachinery:
    """The import algorithm; the importer supplies ``modules``, ``_load_module`` and
    ``extern_modules``."""

    modules: dict[str, Any]
    extern_modules: list[str]

    def _load_module(self, name: str, parent: str) -> types.ModuleType:
        raise NotImplementedError

    def _gcd_import(self, name: str, package: Any = None, level: int = 0) -> types.ModuleType:
        sanity_check(name, package, level)
        if level > 0:
            name = resolve_name(name, package, level)
        return self._find_and_load(name)

    def _find_and_load(self, name: str) -> types.ModuleType:
        module = self.modules.get(name, _NEEDS_LOADING)
        if module is _NEEDS_LOADING:
            return self._do_find_and_load(name)
        if module is None:
            raise ModuleNotFoundError(f"import of {name} halted; None in sys.modules", name=name)
        # modules that install aliases in sys.modules on import: mirror the aliases here
        if name == "os":
            self.modules["os.path"] = module.path
        elif name == "typing" and sys.version_info < (3, 13):
            self.modules["typing.io"] = module.io  # type: ignore[attr-defined]
            self.modules["typing.re"] = module.re  # type: ignore[attr-defined]
        return module

    def _do_find_and_load(self, name: str) -> types.ModuleType:
        parent, _, child = name.rpartition(".")
        if parent:
            if parent not in self.modules:
                self._gcd_import(parent)
            if name in self.modules:  # importing the parent imported us
                return self.modules[name]
            parent_module = self.modules[parent]
            if not hasattr(parent_module, "__path__"):
                if isinstance(parent_module.__dict__.get(child), types.ModuleType) and (
                        name in self.extern_modules):
                    return parent_module.__dict__[child]
                raise ModuleNotFoundError((_ERR_MSG + "; {!r} is not a package").format(
                    name, parent), name=name)
        module = self._load_module(name, parent)
        self._install_on_parent(parent, name, module)
        return module

    def _install_on_parent(self, parent: str, name: str, module: types.ModuleType) -> None:
        if not parent:
            return
        parent_module = self.modules[parent]
        if parent_module.__loader__ is self:
            setattr(parent_module, name.rpartition(".")[2], module)

    def _handle_fromlist(self, module: types.ModuleType, fromlist: Any, *,
                         recursive: bool = False) -> types.ModuleType:
        module_name = demangle(module.__name__)
        if not hasattr(module, "__path__"):
            return module
        for x in fromlist:
            if not isinstance(x, str):
                where = module_name + ".__all__" if recursive else "``from list''"
                raise TypeError(f"Item in {where} must be str, not {type(x).__name__}")
            if x == "*":
                if not recursive and hasattr(module, "__all__"):
                    self._handle_fromlist(module, module.__all__, recursive=True)
            elif not hasattr(module, x):
                from_name = f"{module_name}.{x}"
                try:
                    self._gcd_import(from_name)
                except ModuleNotFoundError as exc:
                    # a missing submodule is fine: the attribute lookup reports it later
                    if exc.name == from_name and self.modules.get(
                            from_name, _NEEDS_LOADING) is not None:
                        continue
                    raise
        return module

    def __import__(self, name: str, globals: Any = None, locals: Any = None,
                   fromlist: Any = (), level: int = 0) -> types.ModuleType:
        if level == 0:
            module = self._gcd_import(name)
        else:
            module = self._gcd_import(name, calc_package(globals or {}), level)
        if fromlist:
            return self._handle_fromlist(module, fromlist)
        if level == 0:
            return self._gcd_import(name.partition(".")[0])
        if not name:
            return module
        cut_off = len(name) - len(name.partition(".")[0])
        module_name = demangle(module.__name__)
        return self.modules[module_name[: len(module_name) - cut_off]]


def import_real(name: str) -> types.ModuleType:
    """The process's own module `name` (for externs and the implicit allow-list)."""
    return importlib.import_module(name)
