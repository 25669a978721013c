"""Mirrors: ``torch.utils.deterministic``: the ``fill_uninitialized_memory`` switch.

With ``use_deterministic_algorithms(True)`` and this switch on (the default), ``empty`` and its
relatives return NaN (floating), the largest value (integers) or True (bool) instead of
whatever memory held, as PyTorch does. The module's class is replaced so that the switch is
a property of the module object, read and assigned as ``torch.utils.deterministic.fill_...``.
"""

from __future__ import annotations

import sys
import types

from hookgrad import _runtime


class _Deterministic(types.ModuleType):
    @property
    def fill_uninitialized_memory(self) -> bool:
        """Whether new "uninitialised" tensors are filled in deterministic mode."""
        return _runtime.get_deterministic_fill_uninitialized_memory()

    @fill_uninitialized_memory.setter
    def fill_uninitialized_memory(self, mode: bool) -> None:
        _runtime.set_deterministic_fill_uninitialized_memory(mode)


sys.modules[__name__].__class__ = _Deterministic
