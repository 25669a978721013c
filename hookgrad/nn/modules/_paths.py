"""Publish classes at PyTorch's module paths (``nn.modules.loss.MarginRankingLoss``...).

Tools import classes from the file PyTorch defines them in. hookgrad sometimes defines a class in
another file (a file per family, or a newer file that would otherwise import its own importer);
`publish` makes the class an attribute of the module at PyTorch's path and names that module as
the class's ``__module__`` (so reprs, pickles and ``cls.__module__`` checks read as PyTorch's).
"""

from __future__ import annotations

import importlib
from typing import Any


def publish(target: str, namespace: dict[str, Any], names: list[str]) -> None:
    """Set each of `names` from `namespace` on module `target` (and list it in its __all__)."""
    mod = importlib.import_module(target)
    exported = list(getattr(mod, "__all__", []))
    for name in names:
        obj = namespace[name]
        setattr(mod, name, obj)
        if isinstance(obj, type) and obj.__module__ != target:
            obj.__module__ = target
        if name not in exported:
            exported.append(name)
    mod.__all__ = exported
