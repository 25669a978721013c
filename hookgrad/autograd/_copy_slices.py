"""`CopySlices`: the base's node after an in-place op on one of its views, and the checks that
decide whether such an in-place op is allowed (NOTE [Views and in-place] in ``_edges.py``).

Backward of ``CopySlices`` (PyTorch's algorithm): the base's gradient passes through unchanged
outside the view; the part inside the view is handed to the in-place op's own node, whose
gradient for its ``self`` input replaces it, while its other inputs get their gradients from
that same call. The view region is found by replaying the view's chain of view primitives on the
gradient, so it works for any memory layout; everything is done with hookgrad ops, so under
``create_graph=True`` the computation is itself recorded (a ``CopySlices`` again, as in
PyTorch) and double backward works.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from hookgrad._dispatch import bind
from hookgrad._ops.registry import PRIMITIVES
from hookgrad._ops.shape import zeros_of
from hookgrad._tensor import Tensor
from hookgrad.autograd._edges import gradient_edge, move_autograd_identity, refresh_view
from hookgrad.autograd._layout import _dense_order
from hookgrad.autograd._node import Node


def replay_view(base: Tensor, chain: tuple) -> Tensor:
    """Apply a view's recorded chain of view primitives to `base` (another tensor)."""
    out = base
    for prim, params, i in chain:
        res = bind(prim, (out,), params)
        out = res[i] if prim.multi_output else res
    return out


def _layout_of(arr: Any) -> tuple | None:
    """The element strides of a dense, permuted base (None: row-major will do)."""
    if type(arr) is not np.ndarray or arr.flags.c_contiguous or not _dense_order(arr):
        return None
    if min(arr.strides, default=0) < 0:
        return None
    return tuple(st // arr.itemsize for st in arr.strides)


def _restride(t: Tensor, strides: tuple) -> None:
    # PyTorch allocates CopySlices' result with the base's geometry (``new_empty_strided``) and
    # copies the gradient in: the base's gradient (and what a hook on it sees) follows the
    # base's layout. `t` is a fresh clone nothing else holds, so its array may be replaced.
    data = t._data
    item = data.itemsize
    buf = np.empty(max(data.size, 1), dtype=data.dtype)
    out = np.lib.stride_tricks.as_strided(buf, data.shape, tuple(st * item for st in strides))
    out[...] = data
    t._data = out


class CopySlices(Node):
    """Mirrors PyTorch's ``CopySlices`` node (name ``torch::autograd::CopySlices``)."""

    __slots__ = ("_fn", "_chain", "_base_meta", "_base_order")

    def __init__(self, base: Tensor, view: Tensor, fn: Any) -> None:
        super().__init__((gradient_edge(base),) + tuple(fn._next_edges[1:]))
        self._fn = fn
        self._chain = view._view_chain
        self._base_meta = (base._data.shape, base._data.dtype)
        self._base_order = _layout_of(base._data)

    def name(self) -> str:
        return "torch::autograd::CopySlices"

    def input_metadata(self) -> list | None:
        inner = self._fn.input_metadata()
        if inner is None:
            return None
        return [self._base_meta] + list(inner[1:])

    def apply(self, grads: tuple, needed: tuple | None = None) -> tuple:
        grad = grads[0]
        if grad is None:
            return (None,) * len(self._next_edges)
        result = bind(PRIMITIVES["clone"], (grad,), {"memory_format": "contiguous_format"})
        if self._base_order is not None:
            _restride(result, self._base_order)
        region = replay_view(result, self._chain)
        # A copy: the op's rules may return their gradient argument itself (identity rules),
        # and `region` is overwritten below. Row-major, as PyTorch's
        # ``grad_slice.clone(at::MemoryFormat::Contiguous)``.
        sliced = bind(PRIMITIVES["clone"], (region,), {"memory_format": "contiguous_format"})
        res = self._fn.apply((sliced,), needed)
        first = res[0] if res else None
        if first is None:
            first = zeros_of(region, region._data.shape)
        region.copy_(first)
        outs = [result, *res[1:]]
        for i, (nxt, _) in enumerate(self._next_edges):
            # PyTorch computes no gradient without an edge, nor one the task does not need
            # (task_should_compute_output: hooks then see None, the base's too)
            if i < len(outs) and (nxt is None or (needed is not None and not needed[i])):
                outs[i] = None
        return tuple(outs)

    def release_saved(self) -> None:
        self._fn.release_saved()

    def __getattr__(self, name: str) -> Any:
        # ``_saved_*`` of the wrapped in-place node (PyTorch exposes them through ``fn``).
        if name.startswith("_saved_") or name.startswith("_raw_saved_"):
            return getattr(self._fn, name)
        raise AttributeError(f"'CopySlices' object has no attribute '{name}'")


def rebase_view_inplace(view: Tensor, fn: Any) -> None:
    """After an in-place op on `view`: base gets CopySlices, the view is regenerated lazily."""
    base = view._base
    node = CopySlices(base, view, fn)
    move_autograd_identity(base, node, 0)
    base._requires_grad = True
    # Rebuild the view's grad_fn now (as_strided of the base), as PyTorch does: this also
    # resets its tensor-hook table, so hooks registered from now on go to the new node.
    view._view_version = -1
    view._requires_grad = True
    refresh_view(view)


__all__ = ["CopySlices", "rebase_view_inplace", "replay_view"]
