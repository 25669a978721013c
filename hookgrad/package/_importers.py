"""Import environments: where the exporter looks up modules and the names of pickled objects."""

from __future__ import annotations

import importlib
import logging
import pickle
from abc import ABC, abstractmethod
from types import ModuleType
from typing import Any

from hookgrad.package._mangling import demangle, get_mangle_prefix, is_mangled

_log = logging.getLogger(__name__)


class ObjNotFoundError(Exception):
    """An object could not be found by its name in an import environment.

    Mirrors: ``torch.package.ObjNotFoundError``.
    """


class ObjMismatchError(Exception):
    """Importing an object by its name gave a different object.

    Mirrors: ``torch.package.ObjMismatchError``.
    """


def _walk(obj: Any, qualname: str) -> Any:
    for part in qualname.split("."):
        if part == "<locals>":
            raise AttributeError(f"Can't get local attribute {qualname!r} on {obj!r}")
        obj = getattr(obj, part)
    return obj


class Importer(ABC):
    """An environment of modules: ``import_module(name)`` plus finding an object's name in it.

    Mirrors: ``torch.package.Importer``.
    """

    modules: dict[str, ModuleType]

    @abstractmethod
    def import_module(self, module_name: str) -> ModuleType:
        """Import `module_name` in this environment (raises ``ModuleNotFoundError``)."""

    def get_name(self, obj: Any, name: str | None = None) -> tuple[str, str]:
        """``(module name, qualname)`` that gives back `obj` when imported from here."""
        if name is None and obj is not None and pickle._Pickler.dispatch.get(type(obj)) is None:
            reduce = getattr(obj, "__reduce__", None)
            try:  # a __reduce__ returning a string names a global (pickle's rule)
                rv = reduce() if reduce is not None else None
                name = rv if isinstance(rv, str) else None
            except Exception:
                name = None
        if name is None:
            name = getattr(obj, "__qualname__", None) or obj.__name__
        module_name = demangle(self.whichmodule(obj, name))
        try:
            obj2 = _walk(self.import_module(module_name), name)
        except (ImportError, KeyError, AttributeError):
            raise ObjNotFoundError(f"{obj} was not found as {module_name}.{name}") from None
        if obj is obj2:
            return module_name, name
        raise ObjMismatchError(self._mismatch_message(obj, obj2, name))

    def _mismatch_message(self, obj: Any, obj2: Any, name: str) -> str:
        def info(o: Any) -> tuple[str, str, str]:
            mod = self.whichmodule(o, name)
            if is_mangled(mod):
                prefix = get_mangle_prefix(mod)
                return mod, prefix, f"the importer for {prefix}"
            return mod, "the current Python environment", "'sys_importer'"

        m1, loc1, imp1 = info(obj)
        m2, loc2, imp2 = info(obj2)
        return (f"\n\nThe object provided is from '{m1}', which is coming from {loc1}."
                f"\nHowever, when we import '{m2}', it's coming from {loc2}."
                "\nTo fix this, make sure this 'PackageExporter's importer lists "
                f"{imp1} before {imp2}.")

    def whichmodule(self, obj: Any, name: str) -> str:
        """Name of the module `obj` belongs to (``__module__``, else a search of `modules`)."""
        module_name = getattr(obj, "__module__", None)
        if module_name is not None:
            return module_name
        for module_name, module in self.modules.copy().items():
            if module_name in ("__main__", "__mp_main__") or module is None:
                continue
            try:
                if _walk(module, name) is obj:
                    return module_name
            except AttributeError:
                pass
        return "__main__"


class _SysImporter(Importer):
    """The process's normal import system."""

    def import_module(self, module_name: str) -> ModuleType:
        return importlib.import_module(module_name)

    def whichmodule(self, obj: Any, name: str) -> str:
        module_name = getattr(obj, "__module__", None)
        if module_name is not None:
            return module_name
        return pickle.whichmodule(obj, name)


sys_importer = _SysImporter()


class OrderedImporter(Importer):
    """Tries several importers in order; the first that finds a module or name wins.

    Mirrors: ``torch.package.OrderedImporter``.
    """

    def __init__(self, *args: Importer) -> None:
        self._importers: list[Importer] = list(args)

    @staticmethod
    def _is_package_dummy(module: ModuleType) -> bool:
        # An empty package synthesised by a PackageImporter for a folder with no __init__.py:
        # it must not hide the real package of a later importer.
        if not getattr(module, "__hookgrad_package__", False):
            return False
        if not hasattr(module, "__path__"):
            return False
        return getattr(module, "__file__", None) is None

    def get_name(self, obj: Any, name: str | None = None) -> tuple[str, str]:
        for importer in self._importers:
            try:
                return importer.get_name(obj, name)
            except (ObjNotFoundError, ObjMismatchError) as e:
                _log.warning("Tried to call get_name with obj %s, and name %s on %s and got %s",
                             obj, name, importer, e)
        raise ObjNotFoundError(f"Could not find obj {obj} and name {name} in any of the "
                               f"importers {self._importers}")

    def import_module(self, module_name: str) -> ModuleType:
        last_err: ModuleNotFoundError | None = None
        for importer in self._importers:
            if not isinstance(importer, Importer):
                raise TypeError(f"{importer} is not a Importer. All importers in "
                                "OrderedImporter must inherit from Importer.")
            try:
                module = importer.import_module(module_name)
            except ModuleNotFoundError as err:
                last_err = err
                continue
            if not self._is_package_dummy(module):
                return module
        if last_err is not None:
            raise last_err
        raise ModuleNotFoundError(module_name)

    def whichmodule(self, obj: Any, name: str) -> str:
        for importer in self._importers:
            module_name = importer.whichmodule(obj, name)
            if module_name != "__main__":
                return module_name
        return "__main__"
