"""``hookgrad._dynamo``: the public paths of PyTorch's ``torch._dynamo`` (spec compile.md §2).

Thin re-exports of `hookgrad.compile`; ``config`` is the very module object the compiler reads,
so ``config.patch`` and ``unittest.mock.patch("hookgrad._dynamo.config.X", ...)`` both work.
"""

from __future__ import annotations

import sys
from typing import Any

from hookgrad import _logging  # noqa: F401 - ``hookgrad._logging.set_logs`` (as torch's)
from hookgrad._tensor import Tensor
from hookgrad.compile.core import config
from hookgrad.compile.core.state import TRACES
from hookgrad.compile.api import graph_break
from hookgrad.compile.backends.backends import list_backends, lookup_backend, register_backend
from hookgrad._dynamo import compiled_autograd, exc, test_case, testing, utils
from hookgrad._dynamo.eval_frame import OptimizedModule, disable, explain, optimize, reset
from hookgrad.compile.core.dynamic import mark_dynamic, mark_static, maybe_mark_dynamic
from hookgrad._dynamo.decorators import (  # noqa: E402
    allow_in_graph, assume_constant_result, disallow_in_graph)

sys.modules[__name__ + ".config"] = config


def mark_static_address(t: Any, guard: bool = False) -> None:
    """Mark a tensor whose address stays the same across compiled calls (a hint for CUDA
    graphs, recorded on the tensor as PyTorch does).

    Mirrors: ``torch._dynamo.mark_static_address``.
    """
    if not isinstance(t, Tensor):
        raise TypeError(f"mark_static_address expects a tensor but received {type(t)}")
    t._dynamo_static_input_type = "guarded" if guard else "unguarded"  # type: ignore[attr-defined]


def is_compiling() -> bool:
    """Mirrors: ``torch._dynamo.is_compiling`` (``torch.compiler.is_compiling``)."""
    return bool(TRACES)

__all__ = ["graph_break", "reset", "config", "exc", "testing", "utils", "compiled_autograd", "test_case", "explain", "optimize", "disable",
           "OptimizedModule", "list_backends", "lookup_backend", "register_backend",
           "mark_dynamic", "mark_static", "maybe_mark_dynamic", "allow_in_graph",
           "disallow_in_graph", "assume_constant_result", "mark_static_address", "is_compiling"]
