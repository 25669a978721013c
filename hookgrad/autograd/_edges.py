"""Gradient edges of tensors, and the regeneration of a view's ``grad_fn`` after in-place ops.

NOTE [Views and in-place]
A view shares its base's version counter and remembers the counter value at which its
``grad_fn`` was made (``_view_version``). When the base or any of its views is modified in place
the counter moves on, and the next time the view's ``grad_fn`` is needed it is rebuilt as an
``as_strided`` view of the base's *current* graph (PyTorch shows ``AsStridedBackward0``), so
gradients of the view flow through the in-place op. An in-place op *on* a view makes the base's
``grad_fn`` a `CopySlices` node (see `_copy_slices.py`). Views that must not be modified in
place (NOTE [View creation meta] in ``_functional/_views.py``) raise PyTorch's error instead of
being rebuilt. Rebuilding moves the view's autograd identity like an in-place op does: tensor
hooks registered before stay with the old node, ``retain_grad`` follows the tensor.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np

from hookgrad._backend import element_offset
from hookgrad._config import STATE, set_grad_mode
from hookgrad._dispatch import bind
from hookgrad._ops.registry import PRIMITIVES
from hookgrad._tensor import Tensor
from hookgrad.autograd._node import GradientEdge
from hookgrad.autograd._nodes import _NODE_CLASSES, PrimitiveNode, get_accumulator


def gradient_edge(t: Tensor) -> tuple:
    """``(node, output_nr)`` a gradient for `t` flows into; ``(None, 0)`` if none."""
    if t._base is not None:
        refresh_view(t)
    fn = t._grad_fn
    if fn is not None:
        return (fn, t._output_nr)
    if t._requires_grad and not t._view_no_graph:  # NOTE [Views made without a graph]
        return (get_accumulator(t), 0)
    return (None, 0)


def sync_view(t: Tensor) -> bool:
    """Make view `t` require grad if its base does now; returns whether it requires grad.

    PyTorch derives a view's ``requires_grad`` from its base, so a view of a constant starts to
    require grad when the base does (``base.requires_grad_()``, or an in-place op with an
    operand that requires grad). If the base was modified since the view was made, the view's
    ``grad_fn`` is regenerated on demand (`refresh_view`); otherwise the view is a leaf without
    a gradient of its own (NOTE [Views made without a graph] in _dispatch.py).
    """
    if t._requires_grad:
        return True
    base = t._base
    if base is None or not base._requires_grad or t._data.dtype.kind not in "fcV":
        return False
    t._requires_grad = True
    vc = t._version_counter
    if vc is None or t._view_version == vc.value:
        t._view_no_graph = True
    return True


def refresh_view(t: Tensor) -> None:
    """Rebuild a stale view's ``grad_fn`` from its base (NOTE [Views and in-place])."""
    vc = t._version_counter
    if vc is None or t._view_version == vc.value:
        return
    base = t._base
    meta = t._creation_meta
    # a view with a node of its own is rebuilt even when its base stopped requiring grad
    # (``requires_grad_(False)``): PyTorch then gives the new node an empty edge
    own = t._grad_fn is not None and not base._requires_grad
    if meta is not None and (base._requires_grad or own):
        raise RuntimeError(view_rebase_message(t, meta, indirect=True))
    t._view_version = vc.value
    if not (base._requires_grad or own) or t._data.dtype.kind not in "fcV":
        return
    if own:
        edgeless = Tensor._make(base._data, True)
        edgeless._view_no_graph = True  # requires grad without a gradient edge
        base = edgeless
    size, stride, offset = strided_geometry(t._data, base._data)
    item = base._data.itemsize
    params = {
        "size": size,
        "stride": stride,
        "storage_offset": offset,
        "self_geometry": tuple(s // item for s in base._data.strides),
    }
    prev = STATE.grad_enabled
    set_grad_mode(True)
    try:
        fresh = bind(PRIMITIVES["as_strided"], (base,), params)
    finally:
        set_grad_mode(prev)
    move_autograd_identity(t, fresh._grad_fn, 0)
    t._requires_grad = True


_MULTI = (
    " This view is the output of a function that returns multiple views. Such functions do not "
    "allow the output views to be modified inplace. You should replace the inplace operation by "
    "an out-of-place one."
)
_NO_GRAD = (
    " Given that this use case is ambiguous and error-prone, it is forbidden. You can clarify "
    "your code by moving both the view and the inplace either both inside the no_grad block (if "
    "you don't want the inplace to be tracked) or both outside (if you want the inplace to be "
    "tracked)."
)
# Views output by a custom autograd.Function (NOTE [Custom Function views] in function.py).
_CUSTOM_FUNCTION = (
    " This view was created inside a custom Function (or because an input was returned as-is) "
    "and the autograd logic to handle view+inplace would override the custom backward "
    "associated with the custom Function, leading to incorrect gradients. This behavior is "
    "forbidden. You can fix this by cloning the output of the custom Function."
)
_SUFFIX = {"multi_output": _MULTI, "in_custom_function": _CUSTOM_FUNCTION}


def view_rebase_message(t: Tensor, meta: str, indirect: bool) -> str:
    """PyTorch's ``handle_view_on_rebase`` error for a view that must not be modified in place."""
    modified = "its base or another view of its base has been" if indirect else "is being"
    fn = t._grad_fn
    where = ""
    if fn is not None:
        where = f"Output {t._output_nr} of {re.sub(r'Backward[0-9]*$', '', fn.name())}"
    if meta == "no_grad" or fn is None:
        prefix = (
            f"{where} is a view of a view which was created in"
            if fn is not None
            else "A view was created in"
        )
        msg = f"{prefix} no_grad mode and {modified} modified inplace with grad mode enabled."
    else:
        msg = f"{where} is a view and {modified} modified inplace."
    # A meta may carry extra advice (nn backward-hook views, pytorch/pytorch#61519).
    return msg + _SUFFIX.get(meta, _NO_GRAD) + getattr(meta, "advice", "")


def check_view_inplace(target: Tensor, inputs: tuple) -> None:
    """PyTorch's creation-meta check before an in-place op on a view (``handle_view_on_rebase``).

    Runs whether or not an input requires grad, since a view "requires grad" through its base.
    The "view of a leaf" error comes after it, in the recorder's ``check_inplace_allowed``.
    """
    if not STATE.grad_enabled:
        return
    meta = target._creation_meta
    if meta is None:
        return
    if target._base._requires_grad or any(t._requires_grad for t in inputs):
        raise RuntimeError(view_rebase_message(target, meta, indirect=False))


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
    """``(size, stride, offset)`` of array `view` inside array `base`, in elements."""
    item = view.itemsize
    # a view given other data since (``view.data = x``) keeps its own geometry, as PyTorch's
    # TensorImpl does: its offset is counted from the start of its new memory
    shares = type(view) is not np.ndarray or np.may_share_memory(view, base)
    offset = int(element_offset(view, base)) if shares else 0
    return (tuple(view.shape), tuple(s // item for s in view.strides), offset)


class CopyBackwards(PrimitiveNode):
    """The node of ``copy_``; PyTorch's name carries its C++ namespace."""

    __slots__ = ()

    def name(self) -> str:
        return "torch::autograd::CopyBackwards"


_NODE_CLASSES["CopyBackwards"] = CopyBackwards

__all__ = [
    "gradient_edge",
    "refresh_view",
    "move_autograd_identity",
    "strided_geometry",
    "view_rebase_message",
    "check_view_inplace",
    "get_gradient_edge",
]


def get_gradient_edge(tensor: Any) -> GradientEdge:
    """The node and slot a gradient for `tensor` flows into.

    Mirrors: ``torch.autograd.graph.get_gradient_edge``.
    """
    if not tensor.requires_grad:
        raise RuntimeError(
            "It is not possible to get the gradient edge for a Tensor that does not require "
            "gradients"
        )
    node, nr = gradient_edge(tensor)
    return GradientEdge(node, nr)
