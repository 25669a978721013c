"""Ops PyTorch records as one node that hookgrad used to compose of others: ``kthvalue``,
``median`` (whole tensor and along a dim), ``cummax``/``cummin``, ``logcumsumexp``, ``rot90``
and ``masked_scatter``.

Layer 3. Mirrors the ATen ops of the same names and their nodes (``KthvalueBackward0``,
``MedianBackward0``/``MedianBackward1``, ``CummaxBackward0``/``CumminBackward0``,
``LogcumsumexpBackward0``, ``Rot90Backward0``, ``MaskedScatterBackward0``): the node a result
shows, what it saves (saved-tensor hooks see those packs) and the gradient formulas are
PyTorch's (``value_selecting_reduction_backward``, ``evenly_distribute_backward``,
``cummaxmin_backward``, ``logcumsumexp_backward``, ``grad.rot90(-k)``, ``masked_scatter_backward``).

Selections pick among equal values as ATen's kernels: ``median`` with a stable sort (the
first of the tied values in order, ATen's ``nth_element`` on (value, index)), ``kthvalue`` with
ATen's quickselect (`_aten_quickselect`); a line holding NaN has the NaN as its median, at the first NaN's index, as ATen's kernel.
"""

from __future__ import annotations

from typing import Any

import ml_dtypes
import numpy as np

from hookgrad._backend import namespace_of, to_numpy
from hookgrad._dispatch import bind
from hookgrad._ops._elementwise import quiet
from hookgrad._ops._layout import like_empty_like
from hookgrad._ops._rules import api
from hookgrad._ops.registry import PRIMITIVES as P
from hookgrad._ops.registry import defop
from hookgrad._ops.shape import zeros_of
from hookgrad._ops.value_select import _evenly, _evenly_read, _finish, _lines, select_op
from hookgrad._tensor import Tensor


# ---------------------------------------------------------------- kthvalue, median
def _kth_impl(self: Any, k: int, dim: int = -1, keepdim: bool = False) -> tuple:
    lines, rows = _lines(self, dim)
    order = np.argsort(lines, axis=-1, kind="stable")  # NaN sorts last (largest)
    idx = order[:, k - 1]
    if lines.shape[1] > 1:
        # which of tied values is returned is decided by ATen's quickselect: lines whose k-th
        # value has an equal neighbour in sorted order are selected again by its algorithm
        ranked = np.take_along_axis(lines, order, axis=-1)
        kth = ranked[:, k - 1:k]
        near = ranked[:, max(k - 2, 0):k + 1]
        same = (near == kth) | (np.isnan(near) & np.isnan(kth)) if lines.dtype.kind == "f" \
            else near == kth
        for r in np.nonzero(same.sum(-1) > 1)[0]:
            idx[r] = _aten_quickselect(lines[r].tolist(), k - 1)
    return _finish(self, lines[np.arange(len(lines)), idx], idx, rows, dim, keepdim)


def _gt_or_nan(a: Any, b: Any) -> bool:
    return (a != a and b == b) or a > b  # NaN above every number, as ATen's comparator


def _aten_quickselect(vals: list, k: int) -> int:
    """The index ATen's CPU ``kthvalue`` returns for the 0-based rank `k` of `vals`.

    ATen selects with Sedgewick's median-of-three quickselect (``quick_select_template`` in
    ``Sorting.cpp``), moving values and their indices together; among tied values the one it
    returns depends on that sequence of swaps, so the sequence is followed here step by step.
    """
    idx = list(range(len(vals)))

    def swap(i: int, j: int) -> None:
        vals[i], vals[j] = vals[j], vals[i]
        idx[i], idx[j] = idx[j], idx[i]

    lo, hi = 0, len(vals) - 1
    while hi > lo:
        if hi == lo + 1:
            if _gt_or_nan(vals[lo], vals[hi]):
                swap(lo, hi)
            break
        swap((lo + hi) >> 1, lo + 1)  # median of three: vals[lo + 1] <= vals[lo] <= vals[hi]
        if _gt_or_nan(vals[lo + 1], vals[hi]):
            swap(lo + 1, hi)
        if _gt_or_nan(vals[lo], vals[hi]):
            swap(lo, hi)
        if _gt_or_nan(vals[lo + 1], vals[lo]):
            swap(lo + 1, lo)
        pivot, i, j = vals[lo], lo + 1, hi
        while True:
            i += 1
            while _gt_or_nan(pivot, vals[i]):
                i += 1
            j -= 1
            while _gt_or_nan(vals[j], pivot):
                j -= 1
            if j < i:
                break
            swap(i, j)
        swap(lo, j)
        if j <= k:
            lo = i
        if j >= k:
            hi = j - 1
    return idx[k]


def _median_dim_impl(self: Any, dim: int = -1, keepdim: bool = False) -> tuple:
    lines, rows = _lines(self, dim)
    n = lines.shape[1]
    idx = np.argsort(lines, axis=-1, kind="stable")[:, (n - 1) // 2]
    if lines.dtype.kind == "f":
        nan = np.isnan(lines)
        idx = np.where(nan.any(-1), nan.argmax(-1), idx)  # the first NaN of its line
    return _finish(self, lines[np.arange(len(lines)), idx], idx, rows, dim, keepdim)


def _median_impl(self: Any) -> Any:
    xp = namespace_of(self)
    arr = to_numpy(self).reshape(-1)
    if arr.size == 0 or (arr.dtype.kind == "f" and np.isnan(arr).any()):
        if arr.dtype.kind == "f":
            return xp.asarray(np.array(np.nan, dtype=self.dtype))
        # ATen's NaN cast to the integer type: the lowest value from 32 bits up, else 0 (True
        # for bool: NaN is nonzero)
        if arr.dtype.kind == "b":
            return xp.asarray(np.array(True))
        low = np.iinfo(arr.dtype).min if arr.dtype.itemsize >= 4 else 0
        return xp.asarray(np.array(low, dtype=self.dtype))
    return xp.asarray(np.sort(arr, kind="stable")[(arr.size - 1) // 2])


select_op("kthvalue", _kth_impl, "KthvalueBackward0", ("k", "dim", "keepdim"))
select_op("median_dim", _median_dim_impl, "MedianBackward1")
defop("median", impl=_median_impl, saves=("self", "result"), node_name="MedianBackward0",
      vjp={"self": _evenly}, jvp={"self": lambda t, self, result: _evenly_read(t, self, result)})


# ---------------------------------------------------------------- cummax, cummin
def _cum_extreme_impl(better: Any) -> Any:
    def impl(self: Any, dim: int) -> tuple:
        xp = namespace_of(self)
        data = to_numpy(self)
        arr = data.reshape(1) if data.ndim == 0 else data
        axis = dim % arr.ndim
        idx = np.zeros(arr.shape, dtype=np.int64)
        vals = np.empty(arr.shape, dtype=arr.dtype)  # fresh and row-major, as ATen's
        if arr.shape[axis]:
            best = np.take(arr, [0], axis=axis)
            best_i = np.zeros(best.shape, dtype=np.int64)
            for j in range(arr.shape[axis]):
                cur = np.take(arr, [j], axis=axis)
                take = better(cur, best)
                if arr.dtype.kind == "f":
                    take = take | np.isnan(cur)
                best = np.where(take, cur, best)
                best_i = np.where(take, j, best_i)
                at = (slice(None),) * axis + (j,)
                vals[at], idx[at] = best.squeeze(axis), best_i.squeeze(axis)
        return xp.asarray(vals.reshape(data.shape)), xp.asarray(idx.reshape(data.shape))
    return impl


def _cum_extreme_grad(grads: tuple, self_shape: tuple, result1: Tensor, dim: int) -> Tensor:
    if not self_shape:
        return grads[0]
    return bind(P["scatter_add"], (zeros_of(grads[0], self_shape), result1, grads[0]),
                {"dim": dim})


for _name, _better in (("cummax", np.greater_equal), ("cummin", np.less_equal)):
    defop(_name, impl=_cum_extreme_impl(_better), params=("dim",), num_outputs=2,
          nondifferentiable_outputs=(1,), saves=("self", "result1"),
          vjp={"self": lambda grads, self, result1, dim: _cum_extreme_grad(
              grads, tuple(self.shape), result1, dim)},
          jvp={"self": lambda t, result1, dim: (t if t.ndim == 0 else bind(
              P["gather"], (t, result1), {"dim": dim}), None)})


# ---------------------------------------------------------------- logcumsumexp
@quiet  # -inf/inf: nan and -inf silently, as ATen's kernel
def _logcumsumexp_impl(self: Any, dim: int) -> Any:
    xp = namespace_of(self)
    if self.ndim == 0:
        return self.copy()
    if type(self) is np.ndarray and self.dtype.kind == "f":
        return _logcumsumexp_aten(self, dim)
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        m = xp.max(self, axis=dim, keepdims=True) if self.shape[dim] else xp.zeros((), self.dtype)
        m = xp.where(xp.isinf(m), 0, m).astype(self.dtype, copy=False)
        out = (xp.log(xp.cumsum(xp.exp(self - m), axis=dim)) + m).astype(self.dtype, copy=False)
        return xp.ascontiguousarray(out)  # row-major whatever the input's layout, as ATen's


def _logcumsumexp_aten(self: np.ndarray, dim: int) -> np.ndarray:
    """ATen's CPU kernel step by step: a running ``log_add_exp`` in double precision (its
    accumulate type for float and double), each step's value cast to the result, so values
    that decide a later discontinuous op (``remainder``, ``floor``) round as PyTorch's."""
    arr = np.moveaxis(self, dim, -1)
    out = np.empty(arr.shape, dtype=self.dtype)
    cum = np.full(arr.shape[:-1], -np.inf)
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        for i in range(arr.shape[-1]):
            x = arr[..., i].astype(np.float64)
            y_nan = np.isnan(cum)
            low = np.where(y_nan, cum, np.where(cum < x, cum, x))  # std::min(x, cum)
            high = np.where(y_nan, cum, np.where(x < cum, cum, x))  # std::max(x, cum)
            both = (low != high) | np.isfinite(low)
            cum = np.where(both, np.log1p(np.exp(low - high)) + high, x)
            out[..., i] = cum
    return np.ascontiguousarray(np.moveaxis(out, -1, dim))  # row-major, as ATen's


def _reverse_lcse(t: Tensor, dim: int) -> Tensor:
    return t.flip(dim).logcumsumexp(dim).flip(dim)  # type: ignore[attr-defined]


def _logcumsumexp_grad(grad: Tensor, self: Tensor, result: Tensor, dim: int) -> Tensor:
    """ATen's logcumsumexp_backward: the positive and negative parts of `grad` in log space."""
    if grad.numel() == 0 or grad.dim() == 0:
        return grad
    lowest = Tensor._make(np.array(ml_dtypes.finfo(grad._data.dtype).min, dtype=grad._data.dtype))
    log_abs = grad.abs().log()  # type: ignore[attr-defined]
    pos = bind(P["where"], ((grad > 0), log_abs, lowest), {})  # type: ignore[operator]
    neg = bind(P["where"], ((grad < 0), log_abs, lowest), {})  # type: ignore[operator]
    out_pos = (_reverse_lcse(pos - result, dim) + self).exp()  # type: ignore[operator]
    out_neg = (_reverse_lcse(neg - result, dim) + self).exp()  # type: ignore[operator]
    return out_pos - out_neg


defop("logcumsumexp", impl=_logcumsumexp_impl, params=("dim",), saves=("self", "result"),
      vjp={"self": _logcumsumexp_grad},
      jvp={"self": lambda t, self, dim: t if t.ndim == 0 else _lcse_jvp(t, self, dim)})


def _lcse_jvp(t: Tensor, self: Tensor, dim: int) -> Tensor:
    w = (self - self.amax(dim, True).detach()).exp()  # type: ignore[attr-defined]
    return (t * w).cumsum(dim) / w.cumsum(dim)  # type: ignore[attr-defined]


# ---------------------------------------------------------------- rot90
def _rot90_impl(self: Any, k: int, dims: tuple) -> Any:
    d0, d1 = dims

    def flip(a: Any, dims: tuple) -> Any:  # ATen's flip: empty_like(self), the input's layout
        flipped = namespace_of(a).flip(a, dims)
        if type(a) is np.ndarray:
            return like_empty_like(flipped.copy(), a)  # a copy: never a view of the input
        out = namespace_of(a).empty_like(a)
        out[...] = flipped
        return out

    if k == 1:
        return flip(self, dims=(d1,)).swapaxes(d0, d1)
    if k == 2:
        return flip(self, dims=(d0, d1))
    if k == 3:
        return flip(self, dims=(d0,)).swapaxes(d0, d1)
    return namespace_of(self).array(self, order="C", copy=True)  # clone(Contiguous)


defop("rot90", impl=_rot90_impl, params=("k", "dims"),
      vjp={"self": lambda grad, k, dims: grad.rot90(-k, dims)},  # type: ignore[attr-defined]
      jvp={"self": lambda t, k, dims: t.rot90(k, dims)})  # type: ignore[attr-defined]


# ---------------------------------------------------------------- masked_scatter
def _masked_scatter_impl(self: Any, mask: Any, source: Any) -> Any:
    xp = namespace_of(self)
    # ATen: self.expand(...).clone(MemoryFormat::Contiguous), row-major
    out = xp.array(xp.broadcast_to(self, xp.broadcast_shapes(self.shape, mask.shape)), order="C")
    full = xp.broadcast_to(mask, out.shape)
    out[full] = source.reshape(-1)[:int(full.sum())]
    return out


def _masked_scatter_source_grad(grad: Tensor, mask: Tensor, source_shape: tuple) -> Tensor:
    """ATen's masked_scatter_backward: the masked gradient, zero-padded to `source`'s size."""
    picked = bind(P["masked_select"], (grad, mask), {})
    n = 1
    for s in source_shape:
        n *= s
    pad = zeros_of(grad, (n - picked.shape[0],))
    return api().cat([picked, pad], 0).reshape(source_shape)


defop("masked_scatter", impl=_masked_scatter_impl, inputs=("self", "mask", "source"),
      saves=("mask",), node_name="MaskedScatterBackward0",
      vjp={"self": lambda grad, mask, self_shape: bind(
          P["masked_fill"], (grad, mask), {"value": 0}).sum_to_size(self_shape),
          "source": _masked_scatter_source_grad},
      nondifferentiable={"mask": "boolean positions"},
      jvp="linear")

__all__: list = []


# ---------------------------------------------------------------- index_copy, index_fill
def _at(ndim: int, dim: int, index: Any) -> tuple:
    return (slice(None),) * dim + (index,)


def _index_copy_impl(self: Any, index: Any, source: Any, dim: int, order: str = "C") -> Any:
    # index_copy clones row-major (MemoryFormat::Contiguous), index_fill keeps the layout
    out = namespace_of(self).array(self, order=order, copy=True)
    if order == "K" and type(self) is np.ndarray and not self.flags.c_contiguous:
        # clone(Preserve) of a non-dense input is empty_like's layout (a fresh copy either way)
        out = like_empty_like(np.ascontiguousarray(self), self)
    if self.ndim == 0:
        out[...] = source
    else:
        out[_at(self.ndim, dim, index)] = source
    return out


def _index_fill_impl(self: Any, index: Any, value: Any, dim: int) -> Any:
    return _index_copy_impl(self, index, value, dim, "K")


def _zero_at(grad: Tensor, index: Tensor, dim: int) -> Tensor:
    """``grad.index_fill(dim, index, 0)``: the gradient of the overwritten input."""
    return bind(P["index_fill"], (grad, index), {"dim": dim, "value": 0})


def _pick(grad: Tensor, index: Tensor, dim: int) -> Tensor:
    return grad if grad.dim() == 0 else grad.index_select(dim, index)  # type: ignore


defop("index_copy", impl=_index_copy_impl, inputs=("self", "index", "source"), params=("dim",),
      # PyTorch's source formula reads source.dim(): the node saves `source` too
      saves=("index", "source"), node_name="IndexCopyBackward0",
      vjp={"self": lambda grad, index, dim: _zero_at(grad, index, dim),
           "source": lambda grad, index, source, dim: _pick(grad, index, dim).reshape(
               tuple(source.shape))},
      nondifferentiable={"index": "integer positions"}, jvp="linear")
defop("index_fill", impl=lambda self, index, dim, value: _index_fill_impl(self, index, value, dim),
      inputs=("self", "index"), params=("dim", "value"), saves=("index",),
      node_name="IndexFillBackward0",
      vjp={"self": lambda grad, index, dim: _zero_at(grad, index, dim)},
      nondifferentiable={"index": "integer positions"},
      jvp={"self": lambda t, index, dim: _zero_at(t, index, dim)})
defop("index_fill_tensor", impl=lambda self, index, value, dim: _index_fill_impl(
          self, index, value, dim),
      inputs=("self", "index", "value"), params=("dim",), saves=("index",),
      node_name="IndexFillBackward1",
      vjp={"self": lambda grad, index, dim: _zero_at(grad, index, dim),
           # each filled slice once, however often `index` names it (ATen's _unique(index))
           "value": lambda grad, index, dim: _pick(grad, Tensor._make(
               namespace_of(index._data).unique(index._data)), dim).sum()},
      nondifferentiable={"index": "integer positions"}, jvp="linear")


# meta: the results' metadata without the host kernels (they read values)
from hookgrad._ops import _meta_shapes  # noqa: E402


def _scan_meta(self: Any, dim: int) -> list:
    return [(tuple(self.shape), self.dtype), (tuple(self.shape), np.int64)]


def _masked_scatter_meta(self: Any, mask: Any, source: Any) -> tuple:
    return tuple(np.broadcast_shapes(self.shape, mask.shape)), self.dtype  # row-major


_meta_shapes.shapes(["kthvalue"], lambda self, k, dim=-1, keepdim=False:
                    _meta_shapes.select(self, dim, keepdim))
_meta_shapes.shapes(["median_dim"], _meta_shapes.select)
_meta_shapes.shapes(["median"], _meta_shapes.scalar)
_meta_shapes.shapes(["cummax", "cummin"], _scan_meta)
_meta_shapes.shapes(["masked_scatter"], _masked_scatter_meta)
_meta_shapes.shapes(["index_copy"], _meta_shapes.like_self)  # a row-major clone
_meta_shapes.shapes(["index_fill", "index_fill_tensor"], _meta_shapes.kept_layout)
