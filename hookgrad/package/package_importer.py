"""`PackageImporter`: loads the code and objects of an archive in a private module namespace.

SAFETY: loading a package runs the Python code stored in it (module bodies, and whatever the
pickles call), exactly as importing a module does. Only open archives you trust; for data-only
checkpoints that never execute code use `hookgrad.save` / `hookgrad.load`.
"""

from __future__ import annotations

import builtins
import importlib.machinery
import importlib.util
import io
import linecache
import os
import types
from collections.abc import Callable
from contextlib import suppress
from typing import Any

import numpy as np

from hookgrad.package import _module_tree as tree
from hookgrad.package import _tensors
from hookgrad.package._directory import Directory, directory_from_file_list
from hookgrad.package._glob import GlobPattern
from hookgrad.package._import_machinery import ImportMachinery, import_real
from hookgrad.package._importers import Importer
from hookgrad.package._mangling import PackageMangler, demangle
from hookgrad.package._pickler import PackageUnpickler
from hookgrad.package._resources import PackageResourceReader
from hookgrad.package._zip_io import DirectoryReader, open_reader

# modules a pickle may always name, archive or not (NumPy scalars and arrays pickle through
# them)
IMPLICIT_IMPORT_ALLOWLIST = ("numpy", "numpy.core", "numpy.core._multiarray_umath",
                             "numpy._core", "numpy._core.multiarray",
                             "numpy._core._multiarray_umath", "builtins")

tree.install_getfile_patch()


class PackageImporter(ImportMachinery, Importer):
    """Imports modules and loads pickles and resources from a package archive.

    Modules come from the archive (their names carry the prefix ``<hookgrad_package_N>``)
    or, for the names the archive lists as extern, from the loading process.

    .. warning:: The archive's code runs when its modules are imported or its pickles loaded:
       only open archives you trust. For data-only checkpoints use `hookgrad.load`.

    Example:
        >>> import io
        >>> from hookgrad.package import PackageExporter, PackageImporter
        >>> buf = io.BytesIO()
        >>> with PackageExporter(buf) as exp:
        ...     exp.save_source_string("m", "X = 41 + 1\\n")
        >>> imp = PackageImporter(io.BytesIO(buf.getvalue()))
        >>> imp.import_module("m").X, imp.import_module("m").__name__.endswith(">.m")
        (42, True)

    Mirrors: ``torch.package.PackageImporter``.
    """

    modules: dict[str, types.ModuleType]

    def __init__(self, file_or_buffer: Any,
                 module_allowed: Callable[[str], bool] = lambda module_name: True) -> None:
        self.filename, self.zip_reader = open_reader(file_or_buffer)
        self.root = tree.PackageNode(None)
        self.modules = {}
        self.extern_modules = self._read_extern()
        for name in self.extern_modules:
            if not module_allowed(name):
                raise ImportError(f"package '{file_or_buffer}' needs the external module "
                                  f"'{name}' but that module has been disallowed")
            tree.add_extern(self.root, name)
        for fname in self.zip_reader.get_all_records():
            tree.add_file(self.root, fname)
        self.patched_builtins = builtins.__dict__.copy()
        self.patched_builtins["__import__"] = self.__import__
        self.modules["hookgrad_package_importer"] = self  # type: ignore[assignment]
        self.modules["torch_package_importer"] = self  # type: ignore[assignment]
        self._mangler = PackageMangler()
        self.last_map_location: Any = None

    # ------------------------------------------------------------------ modules
    def import_module(self, name: str, package: Any = None) -> types.ModuleType:
        """The module `name` of this package (loaded on first use; mangled names accepted)."""
        return self._gcd_import(self._mangler.demangle(name))

    def _read_extern(self) -> list[str]:
        return self.zip_reader.get_record(".data/extern_modules").decode(
            "utf-8").splitlines(keepends=False)

    def _load_module(self, name: str, parent: str) -> types.ModuleType:
        cur: Any = self.root
        for atom in name.split("."):
            if not isinstance(cur, tree.PackageNode) or atom not in cur.children:
                if name in IMPLICIT_IMPORT_ALLOWLIST:
                    module = self.modules[name] = import_real(name)
                    return module
                raise ModuleNotFoundError(
                    f'No module named "{name}" in self-contained archive "{self.filename}" and '
                    "the module is also not in the list of allowed external modules: "
                    f"{self.extern_modules}", name=name)
            cur = cur.children[atom]
            if isinstance(cur, tree.ExternNode):
                module = self.modules[name] = import_real(name)
                return module
        return self._make_module(name, cur.source_file, isinstance(cur, tree.PackageNode),
                                 parent)

    def _make_module(self, name: str, filename: str | None, is_package: bool,
                     parent: str) -> types.ModuleType:
        mangled_filename = self._mangler.mangle(filename) if filename else None
        spec = importlib.machinery.ModuleSpec(name, self,  # type: ignore[arg-type]
                                              origin="<package_importer>",
                                              is_package=is_package)
        module = importlib.util.module_from_spec(spec)
        module.__name__ = self._mangler.mangle(name)
        ns = module.__dict__
        ns.update(__spec__=spec, __loader__=self, __file__=mangled_filename, __cached__=None,
                  __builtins__=self.patched_builtins, __torch_package__=True,
                  __hookgrad_package__=True)
        self.modules[name] = module
        tree.PACKAGE_IMPORTED_MODULES[module.__name__] = module
        self._install_on_parent(parent, name, module)
        if filename is not None:
            try:
                linecache.lazycache(mangled_filename, ns)  # type: ignore[arg-type]
                exec(self._compile_source(filename, mangled_filename), ns)  # noqa: S102
            except BaseException:
                self._forget_module(name, module, parent)
                raise
        return module

    def _forget_module(self, name: str, module: types.ModuleType, parent: str) -> None:
        # as CPython does for sys.modules: a module whose body failed is not left behind
        self.modules.pop(name, None)
        tree.PACKAGE_IMPORTED_MODULES.pop(module.__name__, None)
        linecache.cache.pop(module.__file__, None)  # type: ignore[arg-type]
        parent_module = self.modules.get(parent) if parent else None
        if parent_module is not None and getattr(parent_module, "__loader__", None) is self:
            with suppress(AttributeError):
                delattr(parent_module, name.rpartition(".")[2])

    def _compile_source(self, fullpath: str, mangled_filename: str | None) -> types.CodeType:
        source = self.zip_reader.get_record(fullpath)
        source = source.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
        return compile(source, mangled_filename or fullpath, "exec", dont_inherit=True)

    def get_source(self, module_name: str) -> str:
        """The archive text of `module_name` (mangled or not)."""
        module = self.import_module(demangle(module_name))
        return self.zip_reader.get_record(demangle(module.__file__)).decode("utf-8")

    def get_resource_reader(self, fullname: str) -> PackageResourceReader | None:
        """An ``importlib.resources`` reader for package `fullname` of this archive."""
        try:
            package = self._get_package(fullname)
        except ImportError:
            return None
        if package.__loader__ is not self:
            return None
        return PackageResourceReader(self, fullname)

    def id(self) -> str:
        """This importer's mangle prefix, e.g. ``<hookgrad_package_0>``."""
        return self._mangler.parent_name()

    # ------------------------------------------------------------------ resources
    def _get_package(self, package: Any) -> types.ModuleType:
        if not hasattr(package, "__spec__"):
            name = package
            package = self.import_module(package)
        else:
            name = package.__spec__.name
        if package.__spec__.submodule_search_locations is None:
            raise TypeError(f"{name!r} is not a package")
        return package

    def _zipfile_path(self, package: Any, resource: str | None = None) -> str:
        module = self._get_package(package)
        if module.__loader__ is not self:
            raise AssertionError(f"package.__loader__ must be self, got {module.__loader__}")
        name = demangle(module.__name__).replace(".", "/")
        if resource is None:
            return name
        parent, file_name = os.path.split(resource)
        if parent:
            raise ValueError(f"{resource!r} must be only a file name")
        return f"{name}/{file_name}"

    def load_binary(self, package: str, resource: str) -> bytes:
        """Bytes of resource `resource` of `package`."""
        return self.zip_reader.get_record(self._zipfile_path(package, resource))

    def load_text(self, package: str, resource: str, encoding: str = "utf-8",
                  errors: str = "strict") -> str:
        """Text of resource `resource` of `package`."""
        return self.load_binary(package, resource).decode(encoding, errors)

    def load_pickle(self, package: str, resource: str, map_location: Any = None) -> Any:
        """Unpickle a resource; classes come from this package, tensors from ``.data/``."""
        data = self.zip_reader.get_record(self._zipfile_path(package, resource))
        storages: dict[Any, np.ndarray] = {}
        reduces: dict[int, Any] = {}

        def persistent_load(pid: Any) -> Any:
            if not isinstance(pid, tuple) or not pid:
                raise _unpickling_error(f"unknown persistent id {pid!r}")
            kind = pid[0].decode("ascii") if isinstance(pid[0], bytes) else pid[0]
            if kind == "storage" and len(pid) == 5:
                _, dtype_name, key, location, numel = pid
                if key not in storages:
                    storages[key] = self._load_storage(str(dtype_name), key, location, numel,
                                                       map_location)
                return storages[key]
            if kind == "reduce_package" and len(pid) in (3, 4):
                if len(pid) == 3:
                    return pid[1](self, *pid[2])
                _, rid, func, args = pid
                if rid not in reduces:
                    reduces[rid] = func(self, *args)
                return reduces[rid]
            raise _unpickling_error("Unknown typename for persistent_load, expected 'storage' "
                                    f"or 'reduce_package' but got '{kind}'")

        self.last_map_location = map_location
        try:
            return PackageUnpickler(self, io.BytesIO(data), persistent_load).load()
        finally:
            self.last_map_location = None

    def _load_storage(self, dtype_name: str, key: Any, location: Any, numel: int,
                      map_location: Any) -> np.ndarray:
        member = f".data/{key}.npy"
        if not self.zip_reader.has_record(member):
            member = f".data/{key}.storage"  # an archive written by PyTorch
        flat = _tensors.read_storage(self.zip_reader.get_record(member), member, dtype_name,
                                     int(numel))
        return _tensors.restore_location(flat, str(location), map_location)

    # ------------------------------------------------------------------ archive info
    def file_structure(self, *, include: GlobPattern = "**",
                       exclude: GlobPattern = ()) -> Directory:
        """The archive's members as a `Directory`, filtered by ``/`` patterns."""
        return directory_from_file_list(self.filename, self.zip_reader.get_all_records(),
                                        include, exclude)

    def python_version(self) -> str | None:
        """The Python version that wrote the archive, or ``None``."""
        path = ".data/python_version"
        if not self.zip_reader.has_record(path):
            return None
        return self.zip_reader.get_record(path).decode("utf-8").strip()


def _unpickling_error(msg: str) -> Exception:
    import pickle

    return pickle.UnpicklingError(msg)


__all__ = ["PackageImporter", "DirectoryReader"]
