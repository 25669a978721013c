"""The importer's view of an archive: a tree of packages, modules and extern leaves, plus the
process-wide registry of packaged modules that ``inspect.getfile`` consults."""

from __future__ import annotations

import inspect
from typing import Any
from weakref import WeakValueDictionary


class PackageNode:
    """A package: optional ``__init__.py`` member and children."""

    __slots__ = ("source_file", "children")

    def __init__(self, source_file: str | None) -> None:
        self.source_file = source_file
        self.children: dict[str, Any] = {}


class ModuleNode:
    """A plain module backed by one ``.py`` member."""

    __slots__ = ("source_file",)

    def __init__(self, source_file: str) -> None:
        self.source_file = source_file


class ExternNode:
    """A module taken from the loading process; everything below it is external too."""

    __slots__ = ()


def get_or_create_package(root: PackageNode, atoms: list[str]) -> PackageNode | ExternNode:
    """The package node at `atoms`, creating implicit packages on the way."""
    cur = root
    for i, atom in enumerate(atoms):
        node = cur.children.get(atom)
        if node is None:
            node = cur.children[atom] = PackageNode(None)
        if isinstance(node, ExternNode):
            return node
        if isinstance(node, ModuleNode):
            name = ".".join(atoms[:i])
            raise ImportError(f"inconsistent module structure. module {name} is not a package, "
                              "but has submodules")
        cur = node
    return cur


def add_file(root: PackageNode, filename: str) -> None:
    """Place archive member `filename` in the tree (``.data/`` bookkeeping is skipped)."""
    *prefix, last = filename.split("/")
    if len(prefix) > 1 and prefix[0] == ".data":
        return
    package = get_or_create_package(root, prefix)
    if isinstance(package, ExternNode):
        raise ImportError(f"inconsistent module structure. package contains a module file "
                          f"{filename} that is a subpackage of a module marked external.")
    if last == "__init__.py":
        package.source_file = filename
    elif last.endswith(".py"):
        package.children[last[:-3]] = ModuleNode(filename)


def add_extern(root: PackageNode, extern_name: str) -> None:
    """Mark `extern_name` as an extern leaf."""
    *prefix, last = extern_name.split(".")
    package = get_or_create_package(root, prefix)
    if not isinstance(package, ExternNode):  # else a shorter extern already covers it
        package.children[last] = ExternNode()


# mangled module name -> module, for every module any PackageImporter created
PACKAGE_IMPORTED_MODULES: WeakValueDictionary = WeakValueDictionary()
_orig_getfile = inspect.getfile


def _patched_getfile(obj: Any) -> str:
    # classes record only their module's name; for packaged modules, that name is mangled and
    # not in sys.modules, so inspect would fail without this lookup
    if inspect.isclass(obj) and obj.__module__ in PACKAGE_IMPORTED_MODULES:
        return PACKAGE_IMPORTED_MODULES[obj.__module__].__file__
    return _orig_getfile(obj)


def install_getfile_patch() -> None:
    """Wrap ``inspect.getfile`` once so packaged classes find their archive source."""
    if getattr(inspect.getfile, "__wrapped_by_hookgrad__", False):
        return
    _patched_getfile.__wrapped_by_hookgrad__ = True  # type: ignore[attr-defined]
    inspect.getfile = _patched_getfile
