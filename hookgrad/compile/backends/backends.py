"""Backends: what turns a captured `GraphModule` into the callable a compiled call runs (§9.3).

A backend is ``backend(gm, example_inputs) -> callable``. Named ones are looked up here.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from hookgrad._config import STATE
from hookgrad._tensor import Tensor
from hookgrad.compile.core.graph import GraphModule
from hookgrad.compile.backends.inductor import inductor, numpy_source
from hookgrad.compile.backends.to_fx import core_module_of, to_fx
from hookgrad.compile.backends.joint import JointProgram, joint_supported, requires_grad_names

__all__ = ["lookup_backend", "register_backend", "list_backends", "eager", "call_backend",
           "internal"]

_BACKENDS: dict[str, Callable[..., Any]] = {}


def register_backend(name: str, fn: Callable[..., Any] | None = None) -> Any:
    """Register `fn` as backend `name` (usable as a decorator).

    Mirrors: ``torch._dynamo.register_backend``.
    """
    def deco(f: Callable[..., Any]) -> Callable[..., Any]:
        _BACKENDS[name] = f
        return f
    return deco(fn) if fn is not None else deco


def internal(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Mark `fn` as a backend of compile's primitive-level graph (the built-in ones): it receives
    that ``hookgrad.fx.GraphModule``, also when a wrapper hands it the user-level one made from
    it (`to_fx.core_module_of`)."""
    def run(gm: Any, example_inputs: list) -> Any:
        return fn(core_module_of(gm), example_inputs)
    run.__name__, run.__qualname__, run.__doc__ = fn.__name__, fn.__qualname__, fn.__doc__
    run.__wrapped__ = fn  # type: ignore[attr-defined]
    run._hookgrad_internal = True  # type: ignore[attr-defined]
    return run


def call_backend(backend: Callable[..., Any], gm: GraphModule, example_inputs: list) -> Any:
    """Compile `gm` with `backend`: built-in backends get the primitive-level graph, every other
    one the user-level ``hookgrad.fx.GraphModule`` (`to_fx`), as ``torch.compile`` gives a
    custom backend."""
    if getattr(backend, "_hookgrad_internal", False):
        return backend(gm, example_inputs)
    return backend(to_fx(gm), example_inputs)


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
@internal
def eager(gm: GraphModule, example_inputs: list) -> Callable[..., Any]:
    """Run the graph's generated code: each node calls the hookgrad op (reference semantics)."""
    return gm.forward


@register_backend("aot_eager")
@internal
def aot_eager(gm: GraphModule, example_inputs: list) -> Callable[..., Any]:
    """One autograd node for the whole graph when it records gradients (as PyTorch's AOT
    autograd: ``CompiledFunctionBackward``), else the graph's own code.

    The joint program is `joint.JointProgram`: generated forward and backward code (no
    fusion: that is ``"inductor"``), with intermediate hooks placed in the backward right after
    the intermediate's total gradient is formed (spec §9.3) and module backward hooks fired
    as their identity nodes would be. Graphs with in-place or multi-output ops run the graph's
    code, and hookgrad's engine runs their backward.
    """
    if not any(isinstance(t, Tensor) and t.requires_grad for t in example_inputs) or \
            not STATE.grad_enabled or not joint_supported(gm, example_inputs):
        return gm.forward
    src, ns = numpy_source(gm, joint=True, requires=requires_grad_names(gm, example_inputs))
    gm.numpy_code = src
    exec(compile(src, f"<hookgrad aot {id(gm):x}>", "exec"), ns)  # noqa: S102
    return JointProgram(gm, ns["forward"])


register_backend("inductor", internal(inductor))
