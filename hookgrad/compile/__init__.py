"""hookgrad's tracing JIT: ``hookgrad.compile`` and its machinery (docs/compile.md).

One package per pipeline stage, earliest first (a stage imports only earlier ones; the table is
in docs/compile.md): `core` (IR, sources, state), `effects`, `trace`, `guards`, `codegen`,
`backends`, `cache`, `compiled_autograd`; then the front door `api`, `aot`, `explain`.

The package module is itself callable (``hookgrad.compile(fn)``), so the package name and the
public function can share the ``hookgrad.compile`` attribute whichever import ran last.
"""

from __future__ import annotations

import sys
import types
from typing import Any

from hookgrad.compile.api import OptimizedFunction, OptimizedModule, compile, disable

__all__ = ["compile", "OptimizedFunction", "OptimizedModule", "disable"]


class _CallablePackage(types.ModuleType):
    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return compile(*args, **kwargs)


sys.modules[__name__].__class__ = _CallablePackage
