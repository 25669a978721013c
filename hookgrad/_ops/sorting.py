"""Value-selecting primitives: amax/amin, max/min, argmax/argmin, sort, topk.

NOTE [Indices as inputs]
``max(dim)``, ``sort`` and ``topk`` return ``(values, indices)`` and PyTorch's node saves only the
*indices* output (``MaxBackward0._saved_indices``, packed once by saved-tensor hooks). Here the
indices are computed first by a non-differentiable primitive (``argmax``, ``argsort``,
``topk_indices``), then passed as a non-differentiable *input* of the selecting primitive
(``max_dim(self, indices)`` = take along ``dim``). So the node saves exactly the tensor the user
gets back as ``.indices``, the graph has a single edge to ``self`` as in PyTorch, and the JVP is
the same primitive applied to the tangent.

Ties: ``amax``/``amin`` and full ``max()``/``min()`` spread the gradient evenly over the tied
elements; ``max(dim)``/``min(dim)`` pick the first extreme index (NaN counts as the extreme), like
PyTorch on CPU; ``sort``/``topk`` order tied values as PyTorch's C++ algorithms do (NOTE [Tie
order] in `hookgrad._ops._stdsort`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from hookgrad._backend import has_data
from hookgrad._dispatch import bind
from hookgrad._ops._layout import like_empty_like
from hookgrad._ops._rule_ops import ARRAY_OPS, TENSOR_OPS
from hookgrad._ops._rules import (
    NO_TANGENT,
    all_dims,
    const,
    restore,
    xp_of,
)
from hookgrad._ops._stdsort import MAX_EMULATED, MAX_EMULATED_TOTAL, sort_row, topk_row
from hookgrad._ops.registry import PRIMITIVES, defop
from hookgrad._tensor import Tensor


def _axis(dim: Any, x: Any) -> Any:
    return tuple(dim) if dim and x.ndim else None


# ---------------------------------------------------------------- amax / amin
def _share_weights(x: Any, r: Any, dim: Any) -> Any:
    """mask / count: each tied extreme gets an equal share (PyTorch's ``scale_grad_by_count``)."""
    xp = xp_of(x)
    mask = x == r
    with np.errstate(invalid="ignore", divide="ignore"):
        return (mask / xp.sum(mask, axis=_axis(dim, x), keepdims=True)).astype(x.dtype)


def _amax_backward(grad: Any, self: Any, result: Any, dim: Any, keepdim: bool,
                   ops: Any) -> Any:
    x = ops.data(self)
    r = restore(ops.data(result), x.shape, dim, keepdim, ARRAY_OPS)
    w = _share_weights(x, r, dim)
    return ops.mul(restore(grad, x.shape, dim, keepdim, ops), ops.const(w))


def _amax_jvp(t: Tensor, self: Tensor, result: Tensor, dim: Any, keepdim: bool) -> Tensor:
    x = self._data
    w = _share_weights(x, restore(result._data, x.shape, dim, keepdim, ARRAY_OPS), dim)
    dims = all_dims(dim, x.ndim)
    return (t * const(w)).sum(dims, keepdim) if dims else t * const(w)  # type: ignore


def _extreme_impl(fn_name: str) -> Any:
    def impl(self: Any, dim: Any = None, keepdim: bool = False) -> Any:
        return getattr(np, fn_name)(self, axis=_axis(dim, self), keepdims=keepdim)

    return impl


defop("amax", impl=_extreme_impl("amax"), params=("dim", "keepdim"), saves=("self", "result"),
      vjp={"self": _amax_backward}, jvp={"self": _amax_jvp})
defop("amin", impl=_extreme_impl("amin"), params=("dim", "keepdim"), saves=("self", "result"),
      vjp={"self": _amax_backward}, jvp={"self": _amax_jvp})


# ---------------------------------------------------------------- max() / min() (full)
def _even_weights(x: Any, r: Any) -> Any:
    """PyTorch's ``evenly_distribute_backward`` mask: NaN results select the NaNs."""
    xp = xp_of(x)
    mask = xp.isnan(x) if x.dtype.kind == "f" and bool(xp.isnan(r)) else x == r
    return mask, (mask / xp.sum(mask)).astype(x.dtype)


def _max_all_backward(grad: Any, self: Any, result: Any, ops: Any) -> Any:
    _, w = _even_weights(ops.data(self), ops.data(result))
    return ops.mul(grad, ops.const(w))


defop("max", impl=lambda self: np.amax(self), saves=("self", "result"), node_name="MaxBackward1",
      vjp={"self": _max_all_backward},
      jvp={"self": lambda t, self, result: (t * const(_even_weights(
          self._data, result._data)[1])).sum()})
defop("min", impl=lambda self: np.amin(self), saves=("self", "result"), node_name="MinBackward1",
      vjp={"self": _max_all_backward},
      jvp={"self": lambda t, self, result: (t * const(_even_weights(
          self._data, result._data)[1])).sum()})


# ---------------------------------------------------------------- argmax / argmin
def _arg_impl(fn_name: str) -> Any:
    def impl(self: Any, dim: Any = None, keepdim: bool = False) -> Any:
        fn = getattr(np, fn_name)
        if dim is None:
            out = fn(self.reshape(-1))
            return np.reshape(out, (1,) * self.ndim) if keepdim else out
        if self.ndim == 0:
            return np.zeros_like(self, dtype=np.int64)
        return fn(self, axis=dim, keepdims=keepdim).astype(np.int64, copy=False)

    return impl


defop("argmax", impl=_arg_impl("argmax"), params=("dim", "keepdim"),
      nondifferentiable={"self": "integer result"}, jvp=NO_TANGENT)
defop("argmin", impl=_arg_impl("argmin"), params=("dim", "keepdim"),
      nondifferentiable={"self": "integer result"}, jvp=NO_TANGENT)


# ---------------------------------------------------------------- selection by indices
def _take(self: Any, indices: Any, dim: int, keepdim: bool = True) -> Any:
    """Values of `self` at `indices` along `dim` (``indices`` lacks `dim` unless keepdim)."""
    if self.ndim == 0:
        return self.copy()
    idx = indices if keepdim else np.expand_dims(indices, dim)
    out = np.take_along_axis(self, idx, axis=dim)
    return out if keepdim else np.squeeze(out, axis=dim)


def _select_backward(grad: Any, indices: Any, self_shape: tuple, dim: int,
                     keepdim: bool = True, ops: Any = TENSOR_OPS) -> Any:
    """PyTorch's ``value_selecting_reduction_backward``: scatter grad into zeros at indices."""
    if len(self_shape) == 0:
        return grad
    idx = ops.data(indices)
    if not keepdim:
        grad, idx = ops.unsqueeze(grad, dim), xp_of(idx).expand_dims(idx, dim)
    return ops.scatter_zeros(self_shape, dim, idx, grad)


def _select_jvp(name: str) -> Any:
    """The selecting primitive applied to the tangent (it is linear in ``self``)."""
    if name in ("max_dim", "min_dim"):
        def jvp(t: Tensor, indices: Tensor, dim: int, keepdim: bool) -> Tensor:
            return bind(PRIMITIVES[name], (t, indices), {"dim": dim, "keepdim": keepdim})
    else:
        def jvp(t: Tensor, indices: Tensor, dim: int) -> Tensor:  # type: ignore[misc]
            return bind(PRIMITIVES[name], (t, indices), {"dim": dim})
    return jvp


for _name, _node in (("max_dim", "MaxBackward0"), ("min_dim", "MinBackward0")):
    defop(_name, impl=_take, inputs=("self", "indices"), params=("dim", "keepdim"),
          saves=("indices",), node_name=_node,
          vjp={"self": _select_backward}, jvp={"self": _select_jvp(_name)},
          nondifferentiable={"indices": "integer positions"})


# ---------------------------------------------------------------- sort / topk
def _stable_argsort(self: Any, dim: int, descending: bool) -> Any:
    """Stable argsort; NaN sorts as the largest value (last ascending, first descending)."""
    if not descending:
        return np.argsort(self, axis=dim, kind="stable").astype(np.int64, copy=False)
    # Sorting the reversed array ascending and reversing the result keeps ties in order.
    n = self.shape[dim]
    rev = np.flip(np.argsort(np.flip(self, dim), axis=dim, kind="stable"), dim)
    return (n - 1 - rev).astype(np.int64, copy=False)


def _rows_with_ties(self: Any, order: Any, dim: int) -> Any:
    """Per slice along `dim`: does it hold two equal values (NaNs count as equal)?"""
    sv = np.moveaxis(np.take_along_axis(self, order, axis=dim), dim, -1)
    a, b = sv[..., 1:], sv[..., :-1]
    return np.any((a == b) | ((a != a) & (b != b)), axis=-1).reshape(-1)


def _replay_rows(self: Any, order: Any, dim: int, rows: Any, replay: Any) -> Any:
    """Replace the slices flagged in `rows` by `replay(values_list)` (NOTE [Tie order])."""
    if int(rows.sum()) * self.shape[dim] > MAX_EMULATED_TOTAL:
        return order
    values = np.moveaxis(self, dim, -1)
    shape = values.shape
    values = values.reshape(-1, shape[-1])
    out = np.moveaxis(order, dim, -1).reshape(-1, order.shape[dim]).copy()
    for r in np.nonzero(rows)[0].tolist():
        out[r] = replay(values[r].tolist())
    return np.moveaxis(out.reshape(shape[:-1] + (out.shape[-1],)), -1, dim)


def _like(self: Any, arr: Any) -> Any:
    """`arr` laid out as ATen's sort allocates its outputs (``empty_like``): like `self` when
    dense, else dense in `self`'s dim order with broadcast dims kept in place
    (``infer_dense_strides``, TensorIterator's ordering of one operand)."""
    if self.ndim < 2 or self.flags.c_contiguous:
        return arr
    if type(arr) is np.ndarray and type(self) is np.ndarray:
        return like_empty_like(arr, self)
    out = xp_of(arr).empty_like(self, dtype=arr.dtype)
    out[...] = arr
    return out


def _argsort_impl(self: Any, dim: int = -1, descending: bool = False,
                  stable: bool = False) -> Any:
    """PyTorch's sort order, laid out like `self` (`_like`)."""
    return _like(self, _argsort_order(self, dim, descending, stable))


def _argsort_order(self: Any, dim: int = -1, descending: bool = False,
                   stable: bool = False) -> Any:
    """PyTorch's sort order: stable, or ``std::sort``'s order among ties (NOTE [Tie order])."""
    if self.ndim == 0:
        return np.zeros_like(self, dtype=np.int64)
    order = _stable_argsort(self, dim, descending)
    n = self.shape[dim]
    if stable or n <= 16 or n > MAX_EMULATED:  # std::sort is an insertion sort up to 16
        return order
    rows = _rows_with_ties(self, order, dim)
    if not rows.any():
        return order
    return _replay_rows(self, order, dim, rows, lambda v: sort_row(v, descending))


def _topk_indices_impl(self: Any, k: int, dim: int = -1, largest: bool = True,
                       sorted: bool = True) -> Any:  # noqa: A002
    if self.ndim == 0:
        return np.zeros_like(self, dtype=np.int64)
    order = _stable_argsort(self, dim, largest)
    n = self.shape[dim]
    if n <= MAX_EMULATED and k > 0:
        rows = _rows_with_ties(self, order, dim)
        if not sorted and k * 64 > n:  # nth_element leaves the k values unsorted
            rows[:] = True
        if has_data(rows) and rows.any():  # (meta: no values, no ties to replay)
            full = _replay_rows(self, order, dim, rows,
                                lambda v: topk_row(v, k, largest, sorted) + [0] * (n - k))
            order = full
    # a fresh row-major tensor, as ATen's topk allocates its indices
    return xp_of(order).ascontiguousarray(order[(slice(None),) * dim + (slice(0, k),)])


defop("argsort", impl=_argsort_impl, params=("dim", "descending", "stable"),
      nondifferentiable={"self": "integer result"}, jvp=NO_TANGENT)
defop("topk_indices", impl=_topk_indices_impl, params=("k", "dim", "largest", "sorted"),
      nondifferentiable={"self": "integer result"}, jvp=NO_TANGENT)


def _sort_backward(grad: Any, indices: Any, self_shape: tuple, dim: int, ops: Any) -> Any:
    """Un-permute: gather `grad` by the inverse permutation (the op is its own adjoint)."""
    if len(self_shape) == 0:
        return grad
    idx = ops.data(indices)
    inverse = xp_of(idx).argsort(idx, axis=dim)
    return ops.call(PRIMITIVES["sort"], (grad, ops.const(inverse)), {"dim": dim})


for _name, _node in (("sort", "SortBackward0"), ("sort_stable", "SortBackward1")):
    defop(_name, impl=lambda self, indices, dim: _like(self, _take(self, indices, dim)),
          inputs=("self", "indices"), params=("dim",), saves=("indices",), node_name=_node, vjp={"self": _sort_backward}, jvp={"self": _select_jvp(_name)},
          nondifferentiable={"indices": "integer positions"})

defop("topk", impl=_take, inputs=("self", "indices"), params=("dim",), saves=("indices",),
      vjp={"self": lambda grad, indices, self_shape, dim, ops: _select_backward(
          grad, indices, self_shape, dim, ops=ops)}, jvp={"self": _select_jvp("topk")},
      nondifferentiable={"indices": "integer positions"})
