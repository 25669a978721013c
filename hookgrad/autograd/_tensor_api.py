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
from hookgrad.autograd._edges import refresh_view, sync_view
from hookgrad.utils.hooks import HookRegistry, RemovableHandle

_NO_GRAD_HOOK = "cannot register a hook on a tensor that doesn't require gradient"
# Set by hookgrad.func: binds a hook registered inside a grad transform to that transform's
# backward pass, as functorch's per-level wrappers do (NOTE [Tensor hooks under transforms]).
HOOK_SCOPE: list = [None]


def backward(self: Tensor, gradient: Any = None, retain_graph: bool | None = None,
             create_graph: bool = False, inputs: Any = None) -> None:
    """Mirrors: ``torch.Tensor.backward``."""
    _api.backward(self, gradient, retain_graph, create_graph, inputs=inputs)


def register_hook(self: Tensor, hook: Callable[..., Any]) -> RemovableHandle:
    """Register a backward hook on this tensor's gradient (spec §3.1).

    The hook is called as ``hook(grad: Tensor | None) -> Tensor | None`` once per backward pass
    in which this tensor's gradient is computed, with the total gradient w.r.t. this tensor
    (``None`` for an unused output of a multi-output op). Returning ``None`` keeps the gradient;
    returning a Tensor of the same size and dtype replaces it for later hooks of this tensor,
    for ``retain_grad``, for node pre-hooks and for everything downstream (including what is
    accumulated into a leaf's ``.grad``). Hooks run in registration order, before
    ``retain_grad`` and before the node hooks of the tensor's ``grad_fn`` (NOTE [Per-node hook
    order]); on a leaf they run before the gradient is accumulated.

    Args:
        hook: The callable described above.

    Returns:
        A `RemovableHandle`; ``handle.remove()`` unregisters the hook.

    Raises:
        RuntimeError: If the tensor does not require grad.

    Example:
        >>> import hookgrad as torch
        >>> a = torch.tensor([1., 2.], requires_grad=True)
        >>> h = a.register_hook(lambda g: g * 10)
        >>> (a * 3).sum().backward(); a.grad
        tensor([30., 30.])

    Mirrors: ``torch.Tensor.register_hook``.
    """
    if not self._requires_grad:
        raise RuntimeError(_NO_GRAD_HOOK)
    registry = self._backward_hooks
    if registry is None:
        # first: rebuilding a stale view's grad_fn resets its hook table
        try:
            fn = self._grad_fn if self._base is None else self.grad_fn
        except RuntimeError:
            # PyTorch creates the table before asking for grad_fn: after a refused
            # regeneration the next register_hook finds it and adds its hook silently
            self._backward_hooks = HookRegistry()
            raise
        registry = HookRegistry()
        self._backward_hooks = registry
        if fn is not None:
            fn._register_tensor_hooks(self._output_nr, registry)
    if HOOK_SCOPE[0] is not None:
        hook = HOOK_SCOPE[0](hook)
    return registry.add_plain(hook)


def retain_grad(self: Tensor) -> None:
    """Make a non-leaf tensor keep its ``.grad`` during backward (spec §3.2).

    Idempotent; a no-op on leaves. The retained value is written after all tensor hooks of
    the tensor ran (it reflects their replacements, not node pre-hook replacements), as a new
    tensor on the first pass and accumulated (``.grad + g``) on later passes.

    Raises:
        RuntimeError: If the tensor does not require grad.

    Mirrors: ``torch.Tensor.retain_grad``.
    """
    if not self.requires_grad:
        raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
    if self._base is not None and self._grad_fn is None:
        # PyTorch tests the node the view holds (C++ is_leaf), without regenerating it: a view
        # made without a graph is a leaf here even when its grad_fn would be refused (written
        # under no_grad, then its base with grad mode on)
        return
    fn = self.grad_fn
    if fn is None or self._retains_grad:
        return
    if fn._retain_hooks is None:
        fn._retain_hooks = {}
    fn._retain_hooks[self._output_nr] = weakref.ref(self)
    self._retains_grad = True


def register_post_accumulate_grad_hook(self: Tensor, hook: Callable[..., Any]) -> RemovableHandle:
    """Register a hook that runs after a gradient was accumulated into this leaf's ``.grad``.

    The hook is called as ``hook(tensor: Tensor) -> None`` with the leaf itself (so
    ``tensor.grad`` already holds the accumulated value), once per backward pass that
    accumulates into the leaf. It does not run under ``autograd.grad`` or for leaves excluded by
    ``backward(inputs=...)``. It must return ``None``: a Tensor raises ``RuntimeError``, any
    other object ``TypeError`` (``.grad`` has already been updated by then).

    Args:
        hook: The callable described above.

    Returns:
        A `RemovableHandle`.

    Raises:
        RuntimeError: If the tensor does not require grad, or is not a leaf.

    Example:
        >>> import hookgrad as torch
        >>> p = torch.ones(2, requires_grad=True)
        >>> h = p.register_post_accumulate_grad_hook(lambda t: print(t.grad))
        >>> (p * 3).sum().backward()
        tensor([3., 3.])

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
    STATE_HOOKS.sync_view = sync_view  # type: ignore[method-assign]


__all__ = ["install"]
