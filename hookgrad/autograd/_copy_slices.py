"""`CopySlices`: the base's node after an in-place op on one of its views (NOTE [Views and in-place]).

Backward: the base's gradient passes through unchanged outside the view; inside the view region
it is replaced by what the in-place op's own node computes for its ``self`` input, and the op's
other inputs get their gradients from that same call.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from hookgrad import _backend
from hookgrad._tensor import Tensor
from hookgrad.autograd._edges import gradient_edge, move_autograd_identity
from hookgrad.autograd.graph import Node


class CopySlices(Node):
    """Mirrors PyTorch's ``CopySlices`` node (name ``CopySlices``)."""

    __slots__ = ("_fn", "_geometry", "_base_meta")

    def __init__(self, base: Tensor, view: Tensor, fn: Node) -> None:
        base_edge = gradient_edge(base)
        super().__init__((base_edge,) + tuple(fn._next_edges[1:]))
        self._fn = fn
        owner = base._data
        size, stride = tuple(view._data.shape), tuple(
            s // view._data.itemsize for s in view._data.strides
        )
        self._geometry = (size, stride, _backend.element_offset(view._data, owner))
        self._base_meta = (owner.shape, owner.dtype, owner.flags.f_contiguous
                           and not owner.flags.c_contiguous)

    def name(self) -> str:
        return "CopySlices"

    def apply(self, grads: tuple, needed: tuple | None = None) -> tuple:
        grad = grads[0]
        if grad is None:
            return (None,) * len(self._next_edges)
        shape, dtype, fortran = self._base_meta
        result = np.empty(shape, dtype, order="F" if fortran else "C")
        result[...] = grad._data
        region = _backend.as_strided(result, *self._geometry)
        res = self._fn.apply((Tensor._make(region.copy()),))
        first = res[0] if res else None
        if first is None:
            region[...] = 0
        else:
            region[...] = first._data
        return (Tensor._make(result),) + tuple(res[1:])

    def release_saved(self) -> None:
        self._fn.release_saved()


def rebase_view_inplace(view: Tensor, fn: Any) -> None:
    """After an in-place op on `view`: base gets CopySlices, the view is regenerated lazily."""
    base = view._base
    node = CopySlices(base, view, fn)
    move_autograd_identity(base, node, 0)
    base._requires_grad = True
    # Mark the view stale so its grad_fn is rebuilt from the base on next use (as_strided).
    view._view_version = -1
    view._requires_grad = True


__all__ = ["CopySlices", "rebase_view_inplace"]
