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
# raise `FailOnRecompileLimitHit` instead of running eagerly once the limit is reached
fail_on_recompile_limit_hit = False
# Keys PyTorch's own compile tests set, accepted with PyTorch's defaults; hookgrad's tracer has
# no behaviour they switch (it executes the code, so it always sees scalars, numpy and
# data-dependent shapes the same way, and measures no runtime overhead separately)
record_runtime_overhead = True
capture_scalar_outputs = False
capture_dynamic_output_shape_ops = False
optimize_ddp = True
specialize_int = False
specialize_float = False
verbose = False
raise_on_ctx_manager_usage = True
compiled_autograd_kwargs_override: dict = {}
force_parameter_static_shapes = True
trace_numpy = True
guard_nn_modules = True
do_not_emit_runtime_asserts = False
dynamic_shapes = True
allow_rnn = False
enable_compiler_collectives = False

_KEYS = ("recompile_limit", "accumulated_recompile_limit", "error_on_recompile",
         "skip_nnmodule_hook_guards", "wrap_top_frame", "compiled_autograd",
         "automatic_dynamic_shapes", "inline_inbuilt_nn_modules", "suppress_errors",
         "max_inline_depth", "cache_size_limit", "assume_static_by_default",
         "fail_on_recompile_limit_hit", "record_runtime_overhead", "capture_scalar_outputs",
         "capture_dynamic_output_shape_ops", "optimize_ddp", "specialize_int",
         "specialize_float", "verbose", "raise_on_ctx_manager_usage",
         "compiled_autograd_kwargs_override", "force_parameter_static_shapes", "trace_numpy",
         "guard_nn_modules", "do_not_emit_runtime_asserts", "dynamic_shapes", "allow_rnn",
         "enable_compiler_collectives")


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

