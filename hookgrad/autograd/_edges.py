"""Gradient edges of tensors, and the regeneration of a view's ``grad_fn`` after in-place ops.

NOTE [Views and in-place]
A view shares its base's version counter and remembers the counter value at which its
``grad_fn`` was made (``_view_version``). When the base or any of its views is modified in place
the counter moves on, and the next time the view's ``grad_fn`` is needed it is rebuilt as an
``as_strided`` view of the base's *current* graph (PyTorch shows ``AsStridedBackward0``), so
gradients of the view flow through the in-place op. An in-place op *on* a view makes the base's
``grad_fn`` a `CopySlices` node (see `_copy_slices.py`).
"""

from __future__ import annotations

from typing import Any

from hookgrad._backend import namespace_of
from hookgrad._config import STATE
from hookgrad._tensor import Tensor
from hookgrad.autograd._nodes import get_accumulator


def gradient_edge(t: Tensor) -> tuple:
    """``(node, output_nr)`` a gradient for `t` flows into; ``(None, 0)`` if none."""
    if t._base is not None:
        refresh_view(t)
    fn = t._grad_fn
    if fn is not None:
        return (fn, t._output_nr)
    if t._requires_grad:
        return (get_accumulator(t), 0)
    return (None, 0)


def refresh_view(t: Tensor) -> None:
    """Rebuild a stale view's ``grad_fn`` from its base (NOTE [Views and in-place])."""
    vc = t._version_counter
    if vc is None or t._view_version == vc.value:
        return
    base = t._base
    t._view_version = vc.value
    if not base._requires_grad or t._grad_fn is None and not _base_has_graph(base):
        return
    size, stride, offset = strided_geometry(t._data, base._data)
    from hookgrad._dispatch import bind
    from hookgrad._ops.registry import PRIMITIVES

    prev = STATE.grad_enabled
    STATE.grad_enabled = True
    try:
        fresh = bind(PRIMITIVES["as_strided"], (base,),
                     {"size": size, "stride": stride, "storage_offset": offset})
    finally:
        STATE.grad_enabled = prev
    move_autograd_identity(t, fresh._grad_fn, 0)
    t._requires_grad = True


def _base_has_graph(base: Tensor) -> bool:
    return base._grad_fn is not None or base._requires_grad


def move_autograd_identity(t: Tensor, node: Any, output_nr: int) -> None:
    """Point `t` at a new node: old tensor hooks stay behind, retain-grad follows (spec §3.1)."""
    old = t._grad_fn
    if old is not None and old._retain_hooks and t._output_nr in old._retain_hooks:
        ref = old._retain_hooks.pop(t._output_nr)
        if node._retain_hooks is None:
            node._retain_hooks = {}
        node._retain_hooks[output_nr] = ref
    t._grad_fn = node
    t._output_nr = output_nr
    if t._backward_hooks is not None:
        t._backward_hooks = None


def strided_geometry(view: Any, base: Any) -> tuple:
    """``(size, stride, storage_offset)`` of array `view` inside array `base`, in elements."""
    xp = namespace_of(view)
    item = view.itemsize
    if xp.__name__ == "numpy":
        offset = view.__array_interface__["data"][0] - base.__array_interface__["data"][0]
    else:  # pragma: no cover - CuPy
        offset = view.data.ptr - base.data.ptr
    return (tuple(view.shape), tuple(s // item for s in view.strides), offset // item)


__all__ = ["gradient_edge", "refresh_view", "move_autograd_identity", "strided_geometry"]
