"""`WrappingNamespace`: NumPy's namespace seen through a backend (the ``xp`` of backends whose
arrays are not NumPy arrays: ``meta``, the strict test backend).

Submodules are wrapped the same way; types, ufuncs (they dispatch through ``__array_ufunc__``
and keep ``.at``/``.reduce``) and constants pass through; every other function goes through
the subclass's `_wrap`.
"""

from __future__ import annotations

from types import ModuleType
from typing import Any

import numpy as np

__all__ = ["WrappingNamespace"]


class WrappingNamespace(ModuleType):
    """A module proxy over `source` whose functions are replaced by `_wrap`'s results."""

    def __init__(self, source: Any, name: str) -> None:
        super().__init__(name)
        self._source = source

    def __getattr__(self, name: str) -> Any:
        value = getattr(self._source, name)
        if isinstance(value, ModuleType):
            return type(self)(value, f"{self.__name__}.{name}")
        if isinstance(value, (type, np.ufunc)) or not callable(value):
            return value
        return self._wrap(name, value)

    def _wrap(self, name: str, fn: Any) -> Any:
        raise NotImplementedError
