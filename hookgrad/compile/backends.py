"""Backends: what turns a captured `GraphModule` into the callable a compiled call runs (§9.3).

A backend is ``backend(gm, example_inputs) -> callable``. Named ones are looked up here.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from hookgrad.compile.graph import GraphModule
from hookgrad.compile.inductor import inductor

__all__ = ["lookup_backend", "register_backend", "list_backends", "eager"]

_BACKENDS: dict[str, Callable[..., Any]] = {}


def register_backend(name: str, fn: Callable[..., Any] | None = None) -> Any:
    """Register `fn` as backend `name` (usable as a decorator).

    Mirrors: ``torch._dynamo.register_backend``.
    """
    def deco(f: Callable[..., Any]) -> Callable[..., Any]:
        _BACKENDS[name] = f
        return f
    return deco(fn) if fn is not None else deco


def lookup_backend(backend: Any) -> Callable[..., Any]:
    """A backend callable from a name or a callable."""
    if callable(backend):
        return backend
    try:
        return _BACKENDS[backend]
    except KeyError:
        raise RuntimeError(f"Unknown backend {backend!r}; choose one of "
                           f"{sorted(_BACKENDS)} or pass a callable") from None


def list_backends() -> list[str]:
    """The registered backend names."""
    return sorted(_BACKENDS)


@register_backend("eager")
def eager(gm: GraphModule, example_inputs: list) -> Callable[..., Any]:
    """Run the graph's generated code: each node calls the hookgrad op (reference semantics)."""
    return gm.forward


@register_backend("aot_eager")
def aot_eager(gm: GraphModule, example_inputs: list) -> Callable[..., Any]:
    """Named for PyTorch's joint-graph backend; today it runs the forward graph like ``eager``.

    The backward is hookgrad's engine over the nodes the graph's ops record (intermediate hooks
    are registered on the real intermediates by the graph's hook operators), so gradients and
    hook order are eager's. A partitioned joint forward/backward graph is not built yet.
    """
    return gm.forward


register_backend("inductor", inductor)
