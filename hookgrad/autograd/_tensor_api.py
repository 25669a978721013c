"""Autograd methods of `Tensor`, installed by the autograd layer that implements them.

Mirrors: ``torch.Tensor.backward``, ``register_hook``, ``retain_grad``,
``register_post_accumulate_grad_hook``.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import Any

from hookgrad._tensor import STATE_HOOKS, Tensor
from hookgrad.autograd import _api
from hookgrad.autograd._edges import refresh_view
from hookgrad.utils.hooks import HookRegistry, RemovableHandle

_NO_GRAD_HOOK = "cannot register a hook on a tensor that doesn't require gradient"


def backward(self: Tensor, gradient: Any = None, retain_graph: bool | None = None,
             create_graph: bool = False, inputs: Any = None) -> None:
    """Mirrors: ``torch.Tensor.backward``."""
    _api.backward(self, gradient, retain_graph, create_graph, inputs=inputs)


def register_hook(self: Tensor, hook: Callable[..., Any]) -> RemovableHandle:
    """Register ``hook(grad) -> Tensor | None`` on this tensor's gradient (spec §3.1).

    A returned tensor replaces the gradient for later hooks and everything downstream.

    Mirrors: ``torch.Tensor.register_hook``.
    """
    if not self.requires_grad:
        raise RuntimeError(_NO_GRAD_HOOK)
    if self._backward_hooks is None:
        registry = HookRegistry()
        self._backward_hooks = registry
        fn = self.grad_fn
        if fn is not None:
            fn._register_tensor_hooks(self._output_nr, registry)
    return self._backward_hooks.add(hook)


def retain_grad(self: Tensor) -> None:
    """Populate ``.grad`` of a non-leaf during backward (spec §3.2).

    Mirrors: ``torch.Tensor.retain_grad``.
    """
    if not self.requires_grad:
        raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
    fn = self.grad_fn
    if fn is None or self._retains_grad:
        return
    if fn._retain_hooks is None:
        fn._retain_hooks = {}
    fn._retain_hooks[self._output_nr] = weakref.ref(self)
    self._retains_grad = True


def register_post_accumulate_grad_hook(self: Tensor, hook: Callable[..., Any]) -> RemovableHandle:
    """Register ``hook(tensor) -> None`` run after ``.grad`` was accumulated (spec §3.3).

    Mirrors: ``torch.Tensor.register_post_accumulate_grad_hook``.
    """
    if not self.requires_grad:
        raise RuntimeError(_NO_GRAD_HOOK)
    if self.grad_fn is not None:
        raise RuntimeError("post accumulate grad hooks cannot be registered on non-leaf tensors")
    if self._post_accumulate_grad_hooks is None:
        self._post_accumulate_grad_hooks = HookRegistry()
    return self._post_accumulate_grad_hooks.add(hook)


def _view_grad_fn(t: Tensor) -> Any:
    refresh_view(t)
    return t._grad_fn


def install() -> None:
    Tensor.backward = backward  # type: ignore[attr-defined]
    Tensor.register_hook = register_hook  # type: ignore[attr-defined]
    Tensor.retain_grad = retain_grad  # type: ignore[attr-defined]
    Tensor.register_post_accumulate_grad_hook = (  # type: ignore[attr-defined]
        register_post_accumulate_grad_hook
    )
    STATE_HOOKS.view_grad_fn = _view_grad_fn  # type: ignore[method-assign]


__all__ = ["install"]
