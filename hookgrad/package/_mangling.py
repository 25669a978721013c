"""Name mangling of modules loaded by a `PackageImporter`.

Each importer gets a process-unique parent name ``<hookgrad_package_N>``; every module it
loads is named ``<hookgrad_package_N>.real.name`` so classes, functions, tracebacks and
``__file__`` of packaged code never collide with the process's own modules or with another
importer's copy of the same archive.
"""

from __future__ import annotations

import itertools
import re

_MANGLE_RE = re.compile(r"<hookgrad_package_\d+>")
_counter = itertools.count()


class PackageMangler:
    """Mangles names with one importer's prefix and strips only that prefix again.

    Mirrors: ``torch.package._mangling.PackageMangler``.
    """

    def __init__(self) -> None:
        self._mangle_index = next(_counter)
        self._mangle_parent = f"<hookgrad_package_{self._mangle_index}>"

    def mangle(self, name: str) -> str:
        """``name`` under this importer's prefix."""
        if not name:
            raise AssertionError("name must not be empty")
        return self._mangle_parent + "." + name

    def demangle(self, mangled: str) -> str:
        """Strip this importer's prefix; names of other importers pass through unchanged."""
        if mangled.startswith(self._mangle_parent + "."):
            return mangled.partition(".")[2]
        return mangled

    def parent_name(self) -> str:
        """The prefix, e.g. ``<hookgrad_package_0>``."""
        return self._mangle_parent


def is_mangled(name: str) -> bool:
    """True if `name` starts with any importer's prefix.

    Mirrors: ``torch.package._mangling.is_mangled``.
    """
    return bool(_MANGLE_RE.match(name))


def demangle(name: str) -> str:
    """`name` without any importer's prefix (``""`` for a bare prefix).

    Mirrors: ``torch.package._mangling.demangle``.
    """
    if is_mangled(name):
        _, sep, rest = name.partition(".")
        return rest if sep else ""
    return name


def get_mangle_prefix(name: str) -> str:
    """The ``<hookgrad_package_N>`` part of a mangled name (`name` itself otherwise).

    Mirrors: ``torch.package._mangling.get_mangle_prefix``.
    """
    return name.partition(".")[0] if is_mangled(name) else name
