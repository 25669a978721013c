"""Mirrors ``torch._functorch``: the functorch transforms' modules and the compile paths
(``compile.nop``, ``aot_autograd``).

The compile paths are loaded on first access (PEP 562): importing ``hookgrad.func`` loads this
package, and the compile stack sits above ``nn``, which itself uses the functorch transforms
(``nn.utils.stateless``), so an eager import here would close an import circle.
"""

from __future__ import annotations

import importlib
from typing import Any

__all__ = ["aot_autograd", "compile"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
