"""Helpers shared by the reduction, sorting, linalg and softmax rules.

Layer 3 (imports Tensor and the rule operations only). Rules are written once against the
``ops`` they are handed (NOTE [Rule operations] in _rule_ops.py, which replaced the two bodies of
the former NOTE [Raw backward]): the engine decides whether those compute on arrays or on
hookgrad ops.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any

from hookgrad._backend import namespace_of
from hookgrad._ops._rule_ops import TENSOR_OPS, expand_arr
from hookgrad._tensor import Tensor

_make = Tensor._make

def zeros_shaped(like: Tensor, shape: Sequence[int]) -> Tensor:
    """A constant zero tensor of `shape` in `like`'s dtype and device."""
    return _make(namespace_of(like._data).zeros(tuple(shape), dtype=like._data.dtype))


# The `self` rule of a backward op that reads only its input's shape (pooling, unpooling):
# PyTorch declares `self` differentiable with ``zeros_like(self)``, so the op's result requires
# grad when the input does (a gradient computed with create_graph=True has a graph then).
ZERO_SELF = {"self": lambda grad, self_shape: zeros_shaped(grad, self_shape)}

# JVP decision of ops with integer/bool results: an empty mapping, so forward AD gives their
# output no tangent (as PyTorch does) instead of reporting a missing formula.
NO_TANGENT: dict = {}


def const(arr: Any) -> Tensor:
    """Wrap a raw array as a tensor with no history (a constant for autograd)."""
    return _make(arr)


def xp_of(arr: Any) -> Any:
    """The array namespace (NumPy or CuPy) that owns `arr`."""
    return namespace_of(arr)


def all_dims(dim: Sequence[int] | None, ndim: int) -> tuple[int, ...]:
    """The reduced dims as a tuple: None or ``()`` mean every dim (PyTorch's all-reduce)."""
    if not dim:
        return tuple(range(ndim))
    return tuple(dim)


def kept_shape(shape: Sequence[int], dim: Sequence[int] | None) -> tuple[int, ...]:
    """`shape` with the reduced dims set to 1 (the ``keepdim=True`` result shape)."""
    dims = all_dims(dim, len(shape))
    return tuple(1 if i in dims else s for i, s in enumerate(shape))


def reduced_numel(shape: Sequence[int], dim: Sequence[int] | None) -> int:
    """How many input elements feed each output element."""
    if not shape:  # a 0-d input reduces nothing, whatever dim=0/-1 says
        return 1
    n = 1
    for d in all_dims(dim, len(shape)):
        n *= shape[d]
    return n


def restore(t: Any, shape: Sequence[int], dim: Sequence[int] | None, keepdim: bool,
            ops: Any = TENSOR_OPS) -> Any:
    """Give a reduced value back its reduced dims (size 1) so it broadcasts against the input."""
    if keepdim or not shape:
        return t
    target = kept_shape(shape, dim)
    current = t._data.shape if type(t) is Tensor else t.shape
    return t if current == target else ops.reshape(t, target)


def api() -> Any:
    """The public ``hookgrad`` namespace, for the rare rule that needs a function (``cat``).

    Looked up at call time: rule modules sit below the public API in the layering (architecture §3)
    and must not import it.
    """
    return sys.modules["hookgrad"]


__all__ = [
    "const", "xp_of", "all_dims", "kept_shape", "reduced_numel", "restore", "api", "NO_TANGENT",
    "expand_arr", "zeros_shaped", "ZERO_SELF",
]
