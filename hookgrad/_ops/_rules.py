"""Helpers shared by the reduction, sorting, linalg and softmax rules.

Layer 3 (imports Tensor and the config state only).

NOTE [Raw backward]
Derivative rules run with grad mode equal to ``create_graph``. When it is off (every plain
``backward()``), nothing will differentiate the rule's result, so building it from hookgrad ops
only pays for ``bind`` calls and graph bookkeeping that is thrown away. The hot rules therefore
have two bodies: a raw one computing on arrays (`raw_backward` is true) and a differentiable one
written with Tensor methods for ``create_graph=True``, which is what makes double backward work.
Both compute PyTorch's formula; the generic gradcheck/gradgradcheck tests exercise both bodies.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any

import numpy as np

from hookgrad._backend import namespace_of
from hookgrad._config import STATE
from hookgrad._tensor import Tensor

_make = Tensor._make

# JVP decision of ops with integer/bool results: an empty mapping, so forward AD gives their
# output no tangent (as PyTorch does) instead of reporting a missing formula.
NO_TANGENT: dict = {}


def raw_backward() -> bool:
    """True when a rule may compute on raw arrays (see NOTE [Raw backward]).

    Grad mode is off and no recorder but the grad recorder watches `bind` (so no forward-AD
    level is open whose tangents would flow through the rule's ops).
    """
    return not STATE.grad_enabled and not STATE.backward_seen


def expand_arr(a: Any, shape: tuple) -> Any:
    """``broadcast_to(a, shape)``: a read-only view repeating `a` along its size-1 dims.

    NumPy's ``broadcast_to`` spends about 2 us in Python code per call, more than the rules
    that use it on small tensors; a C-contiguous NumPy array is viewed directly with zero
    strides instead (other arrays, e.g. CuPy's, go through their namespace's ``broadcast_to``).
    """
    if type(a) is not np.ndarray or not a.flags.c_contiguous:
        return namespace_of(a).broadcast_to(a, shape)
    lead = len(shape) - a.ndim
    strides = (0,) * lead + tuple(
        0 if n == 1 and m != 1 else st
        for st, n, m in zip(a.strides, a.shape, shape[lead:], strict=True))
    out = np.ndarray(shape, a.dtype, a, 0, strides)
    out.flags.writeable = False  # as broadcast_to: elements share memory
    return out


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


def restore(t: Tensor, shape: Sequence[int], dim: Sequence[int] | None, keepdim: bool) -> Tensor:
    """Give a reduced tensor back its reduced dims (size 1) so it broadcasts against the input."""
    if keepdim or not shape:
        return t
    target = kept_shape(shape, dim)
    return t if t._data.shape == target else t.reshape(target)  # type: ignore[attr-defined]


def restore_arr(a: Any, shape: Sequence[int], dim: Sequence[int] | None, keepdim: bool) -> Any:
    """`restore` on a raw array."""
    if keepdim or not shape:
        return a
    return a.reshape(kept_shape(shape, dim))


def api() -> Any:
    """The public ``hookgrad`` namespace, for the rare rule that needs a function (``cat``).

    Looked up at call time: rule modules sit below the public API in the layering (design.md §3)
    and must not import it.
    """
    return sys.modules["hookgrad"]


__all__ = [
    "raw_backward", "const", "xp_of", "all_dims", "kept_shape", "reduced_numel", "restore",
    "restore_arr", "api", "NO_TANGENT",
]
