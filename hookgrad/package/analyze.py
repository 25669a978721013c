"""Questions about objects and packages (``torch.package.analyze`` subset)."""

from __future__ import annotations

from types import ModuleType
from typing import Any

from hookgrad.package._mangling import is_mangled


def is_from_package(obj: Any) -> bool:
    """True for a module loaded by a `PackageImporter` or an instance of a class defined in one.

    Mirrors: ``torch.package.is_from_package``.
    """
    if type(obj) is ModuleType:
        return is_mangled(obj.__name__)
    return is_mangled(type(obj).__module__)
