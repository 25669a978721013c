"""``reset``, ``optimize``, ``explain`` and friends of ``torch._dynamo``."""

from __future__ import annotations

from typing import Any

from hookgrad.compile import api
from hookgrad.compile.api import OptimizedModule, disable
from hookgrad.compile.compiled_autograd.compiled_autograd import reset_compiled_autograd
from hookgrad.compile.explain import explain
from hookgrad.compile.cache.frame import reset_caches

__all__ = ["reset", "optimize", "explain", "disable", "OptimizedModule"]


def reset() -> None:
    """Drop every compiled artifact, the compiled-autograd cache and the warn-once memory.

    ``utils.counters`` is left alone (as in PyTorch).

    Mirrors: ``torch._dynamo.reset``.
    """
    reset_caches()
    reset_compiled_autograd()


def optimize(backend: Any = "inductor", *, nopython: bool = False, dynamic: Any = None) -> Any:
    """Decorator factory: ``optimize(backend)(fn)`` is ``compile(fn, backend=backend)``.

    Mirrors: ``torch._dynamo.optimize``.
    """
    return api.compile(backend=backend, fullgraph=nopython, dynamic=dynamic)
