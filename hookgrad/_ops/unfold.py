"""``Tensor.unfold``: a view of sliding windows, with PyTorch's node (``UnfoldBackward0``).

The forward is a strided view (one more dim, the window, innermost); the backward adds every
window's gradient back at its positions, one ``index_add`` per window offset (windows overlap
when ``step < size``), so it is differentiable again for double backward.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from hookgrad._backend import namespace_of
from hookgrad._dispatch import bind
from hookgrad._ops._double_backward import BACKWARD_TIE
from hookgrad._ops.registry import PRIMITIVES, defop
from hookgrad._ops.shape import element_strides, strided, zeros_of
from hookgrad._tensor import Tensor


def unfold_geometry(shape: tuple, strides: tuple, dim: int, size: int, step: int) -> tuple:
    """``(size, stride)`` in elements of ``unfold(dim, size, step)`` (0-d: one element)."""
    if not shape:
        return (size,), (1,)
    n = (shape[dim] - size) // step + 1
    return ((*shape[:dim], n, *shape[dim + 1:], size),
            (*strides[:dim], strides[dim] * step, *strides[dim + 1:], strides[dim]))


def _unfold_impl(self: Any, dimension: int, size: int, step: int) -> Any:
    out_size, out_stride = unfold_geometry(self.shape, element_strides(self), dimension, size,
                                           step)
    return strided(self, out_size, out_stride, 0)


def _unfold_vjp(grad: Tensor, self_shape: tuple, dimension: int, size: int, step: int) -> Tensor:
    if not self_shape:  # a 0-d input: the window is the element itself
        return grad.sum()
    n = grad.shape[dimension]
    out = zeros_of(grad, self_shape)
    for k in range(size):
        idx = Tensor._make(namespace_of(grad._data).arange(n, dtype=np.int64) * step + k)
        window = bind(PRIMITIVES["select"], (grad,), {"dim": grad.dim() - 1, "index": k})
        out = out.index_add(dimension, idx, window)
    if not size:  # no window reads the gradient: still a function of it, as unfold_backward
        return bind(BACKWARD_TIE, (out, grad), {"zero": True})
    return out


defop(
    "unfold",
    impl=_unfold_impl,
    params=("dimension", "size", "step"),
    view=True,
    vjp={"self": _unfold_vjp},
    jvp={"self": lambda t, dimension, size, step: t.unfold(dimension, size, step)},
)
