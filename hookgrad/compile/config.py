"""Compiler settings (spec §2, §14.4), read at call time so ``config.patch`` works.

Also reachable as ``hookgrad._dynamo.config`` (the same module object).
"""

from __future__ import annotations

import contextlib
import sys
from typing import Any

recompile_limit = 8
accumulated_recompile_limit = 256
error_on_recompile = False
# hookgrad departs from PyTorch here (spec §6.5, D): a hook added later is never ignored.
skip_nnmodule_hook_guards = False
wrap_top_frame = False
compiled_autograd = False
automatic_dynamic_shapes = True
# False: every eligible size and scalar argument is dynamic from the first trace
assume_static_by_default = True
inline_inbuilt_nn_modules = True  # accepted, no effect (always on in PyTorch 2.13)
suppress_errors = False
max_inline_depth = 64
cache_size_limit = recompile_limit  # older name of recompile_limit

_KEYS = ("recompile_limit", "accumulated_recompile_limit", "error_on_recompile",
         "skip_nnmodule_hook_guards", "wrap_top_frame", "compiled_autograd",
         "automatic_dynamic_shapes", "inline_inbuilt_nn_modules", "suppress_errors",
         "max_inline_depth", "cache_size_limit", "assume_static_by_default")


class _Patch(contextlib.ContextDecorator):
    """Context manager and decorator setting config values for its extent."""

    def __init__(self, changes: dict[str, Any]) -> None:
        for key in changes:
            if key not in _KEYS:
                raise AttributeError(f"hookgrad._dynamo.config has no setting {key!r}")
        self.changes = changes
        self._saved: list[dict[str, Any]] = []

    def __enter__(self) -> _Patch:
        mod = sys.modules[__name__]
        self._saved.append({k: getattr(mod, k) for k in self.changes})
        for k, v in self.changes.items():
            setattr(mod, k, v)
        return self

    def __exit__(self, *exc: Any) -> None:
        mod = sys.modules[__name__]
        for k, v in self._saved.pop().items():
            setattr(mod, k, v)


def patch(arg: str | dict | None = None, value: Any = None, **kwargs: Any) -> _Patch:
    """``config.patch(error_on_recompile=True)`` or ``config.patch("name", value)``.

    Mirrors: ``torch._dynamo.config.patch``.
    """
    changes = dict(kwargs)
    if isinstance(arg, str):
        changes[arg] = value
    elif isinstance(arg, dict):
        changes.update(arg)
    return _Patch(changes)


def to_dict() -> dict[str, Any]:
    """The current settings."""
    mod = sys.modules[__name__]
    return {k: getattr(mod, k) for k in _KEYS}

