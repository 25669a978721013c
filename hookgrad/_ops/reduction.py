"""Reduction primitives (PyTorch docs: "Reduction Ops") and the scans ``cumsum``/``cumprod``.

Value-selecting reductions (max, min, amax, argmax...) live in `sorting`; ``linalg_vector_norm``
lives in `linalg`.

NOTE [Reduction dims]
Public wrappers validate and normalize ``dim`` before binding (`hookgrad._functional.reduction`):
a sorted tuple of distinct non-negative ints, or None. For sum/mean/var/norm an empty tuple means
"every dim", as in PyTorch (``x.sum(dim=[])`` is a full reduction); for all/any it means "no dim".
A 0-d input accepts ``dim=0``/``-1`` and reduces nothing. Rules receive the normalized ``dim``.

Gradients follow PyTorch's formulas in ``FunctionsManual.cpp`` (``prod_backward``,
``var_backward``, ``cumprod_backward``...), including their special cases for zeros, so values
match PyTorch at those points too. Rules take ``ops`` (NOTE [Rule operations]).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from hookgrad._ops._elementwise import quiet, row_major
from hookgrad._backend import namespace_of
from hookgrad._ops._rule_ops import ARRAY_OPS, TENSOR_OPS
from hookgrad._ops._rules import (
    NO_TANGENT,
    all_dims,
    const,
    kept_shape,
    reduced_numel,
    restore,
    xp_of,
)
from hookgrad._ops._shapes import sum_to_dims
from hookgrad._ops.registry import defop
from hookgrad._tensor import Tensor


def _axis(dim: Any, x: Any) -> Any:
    """NumPy ``axis`` for a normalized ``dim`` (None or ``()``: every axis; 0-d: none)."""
    return tuple(dim) if dim and x.ndim else None


def _int_to_long(x: Any, dtype: Any) -> Any:
    """Accumulation dtype: the requested one, else int64 for bool/integer inputs (PyTorch)."""
    if dtype is not None:
        return dtype.np
    return np.int64 if x.dtype.kind in "biu" else None


# ---------------------------------------------------------------- sum
@quiet  # inf + -inf is nan without a warning, as PyTorch's sum
def _sum_impl(self: Any, dim: Any = None, keepdim: bool = False, dtype: Any = None) -> Any:
    return np.sum(self, axis=_axis(dim, self), keepdims=keepdim, dtype=_int_to_long(self, dtype))


def _sum_backward(grad: Any, self_shape: tuple, dim: Any, keepdim: bool,
                  ops: Any = TENSOR_OPS) -> Any:
    return ops.expand(restore(grad, self_shape, dim, keepdim, ops), self_shape)


defop("sum", impl=lambda self, dtype=None: _sum_impl(self, None, False, dtype),
      params=("dtype",),
      vjp={"self": lambda grad, self_shape, ops: _sum_backward(grad, self_shape, None, False,
                                                              ops)},
      jvp="linear")

defop("sum_dim", impl=_sum_impl, params=("dim", "keepdim", "dtype"), node_name="SumBackward1",
      vjp={"self": _sum_backward}, jvp="linear")


def _sum_to_size_impl(self: Any, size: tuple) -> Any:
    dims, lead = sum_to_dims(self.shape, size)
    # a reduction allocates its result row-major in PyTorch (NumPy may keep the input's order)
    out = row_major(np.sum(self, axis=dims, keepdims=True)) if dims else self
    return out.reshape(size) if lead or out.shape != tuple(size) else out


defop("sum_to_size", impl=_sum_to_size_impl, params=("size",),
      node_name="SumBackward1",
      vjp={"self": lambda grad, self_shape: grad.expand(self_shape)}, jvp="linear")


# ---------------------------------------------------------------- mean
@quiet
def _mean_impl(self: Any, dim: Any = None, keepdim: bool = False, dtype: Any = None) -> Any:
    if dtype is not None and self.dtype != dtype.np:
        self = self.astype(dtype.np)
    axis = _axis(dim, self)
    n = reduced_numel(self.shape, axis)
    if n:  # np.errstate costs a microsecond: only where there is a warning to silence
        return np.sum(self, axis=axis, keepdims=keepdim) / n
    with np.errstate(invalid="ignore", divide="ignore"):  # mean of nothing is nan, silently
        return np.sum(self, axis=axis, keepdims=keepdim) / n


def _mean_backward(grad: Any, self_shape: tuple, dim: Any, keepdim: bool,
                   ops: Any = TENSOR_OPS) -> Any:
    # PyTorch's mean_backward: sum_backward, then divided by the count (nan for an empty input)
    n = reduced_numel(self_shape, dim)
    return ops.div(_sum_backward(grad, self_shape, dim, keepdim, ops), n)


defop("mean", impl=lambda self, dtype=None: _mean_impl(self, None, False, dtype),
      params=("dtype",),
      vjp={"self": lambda grad, self_shape, ops: _mean_backward(grad, self_shape, None, False,
                                                               ops)},
      jvp="linear")

defop("mean_dim", impl=_mean_impl, params=("dim", "keepdim", "dtype"), node_name="MeanBackward1",
      vjp={"self": _mean_backward}, jvp="linear")


# ---------------------------------------------------------------- prod
def _prod_impl(self: Any, dim: Any = None, keepdim: bool = False, dtype: Any = None) -> Any:
    axis = dim if dim is not None and self.ndim else None
    return np.prod(self, axis=axis, keepdims=keepdim, dtype=_int_to_long(self, dtype))


def _prod_safe_zeros(grad: Any, inp: Any, dim: int, ops: Any) -> Any:
    """PyTorch's ``prod_safe_zeros_backward``: exclusive cumprods from both ends."""
    n = inp.shape[dim]
    if n == 0:
        return ops.expand(grad, inp.shape)
    x = ops.data(inp)
    ones = ops.const(xp_of(x).ones(kept_shape(inp.shape, (dim,)), dtype=x.dtype))
    before = ops.cumprod(ops.cat([ones, ops.narrow(inp, dim, 0, n - 1)], dim), dim)
    rev = ops.flip(ops.narrow(inp, dim, 1, n - 1), dim)
    after = ops.flip(ops.cumprod(ops.cat([ones, rev], dim), dim), dim)
    return ops.mul(grad, ops.mul(before, after))


def _prod_backward(grad: Any, self: Any, result: Any, dim: Any, keepdim: bool,
                   ops: Any = TENSOR_OPS) -> Any:
    """PyTorch's ``prod_backward`` (full when `dim` is None, else along one dim)."""
    x = ops.data(self)
    if x.ndim == 0:
        return grad
    if dim is not None and not keepdim:
        grad, result = ops.unsqueeze(grad, dim), ops.unsqueeze(result, dim)
    zeros = int(xp_of(x).count_nonzero(x == 0))
    if zeros == 0:
        return ops.mul(grad, ops.div(result, self))
    if dim is None:
        flat = _prod_safe_zeros(grad, ops.reshape(self, (-1,)), 0, ops)
        return ops.reshape(flat, x.shape)
    return _prod_safe_zeros(grad, self, dim, ops)


def _prod_jvp(t: Tensor, self: Tensor, result: Tensor, dim: Any = None,
              keepdim: bool = False) -> Tensor:
    ones = const(xp_of(result._data).ones_like(result._data))
    gin = _prod_backward(ones, self, result, dim, keepdim)
    if dim is None:
        return (gin * t).sum()  # type: ignore[attr-defined]
    return (gin * t).sum(dim, keepdim)  # type: ignore[attr-defined]


defop("prod", impl=lambda self, dtype=None: _prod_impl(self, None, False, dtype),
      params=("dtype",), saves=("self", "result"),
      vjp={"self": lambda grad, self, result, ops: _prod_backward(grad, self, result, None,
                                                                 False, ops)},
      jvp={"self": lambda t, self, result: _prod_jvp(t, self, result)})

defop("prod_dim_int", impl=_prod_impl, params=("dim", "keepdim", "dtype"),
      saves=("self", "result"), node_name="ProdBackward1",
      vjp={"self": _prod_backward}, jvp={"self": _prod_jvp})


# ---------------------------------------------------------------- var / std
def _var_impl(self: Any, dim: Any = None, correction: Any = None, keepdim: bool = False) -> Any:
    axis = _axis(dim, self)
    n = reduced_numel(self.shape, axis)
    c = 1 if correction is None else correction
    with np.errstate(invalid="ignore", divide="ignore"):
        dev = self - np.sum(self, axis=axis, keepdims=True) / n
        sq = dev * dev if dev.dtype.kind != "c" else dev.real * dev.real + dev.imag * dev.imag
        return np.sum(sq, axis=axis, keepdims=keepdim) / max(n - c, 0)


def _var_factor(dof: float) -> float:
    if dof == 0:
        return math.inf
    return 2.0 / dof


def _var_backward(grad: Any, self: Any, dim: Any, correction: Any, keepdim: bool,
                  ops: Any = TENSOR_OPS) -> Any:
    """PyTorch's ``var_backward``: 2/(N - correction) * grad * (x - mean)."""
    x = ops.data(self)
    c = 1 if correction is None else correction
    if x.ndim == 0 or not dim:
        dof = x.size - c
        if dof <= 0:  # inf * 0 = nan where x equals the mean, inf elsewhere (PyTorch's choice)
            xp = xp_of(x)
            with np.errstate(invalid="ignore", divide="ignore"):
                mean = xp.sum(x) / x.size
            return ops.mul(grad, ops.const(xp.where(x == mean, xp.nan, xp.inf).astype(x.dtype)))
        return ops.mul(ops.mul(grad, _var_factor(dof)), ops.sub(self, ops.mean(self, None)))
    factor = _var_factor(reduced_numel(x.shape, dim) - c)
    g = restore(grad, x.shape, dim, keepdim, ops)
    return ops.mul(ops.mul(g, factor), ops.sub(self, ops.mean(self, dim, True)))


def _var_jvp(t: Tensor, self: Tensor, dim: Any, correction: Any, keepdim: bool) -> Tensor:
    full = _var_backward(t, self, dim if dim else None, correction, True)
    dims = all_dims(dim, self.ndim)
    return full.sum(dims, keepdim) if dims else full  # type: ignore[attr-defined]


def _std_grad_var(grad: Any, result: Any, ops: Any = TENSOR_OPS) -> Any:
    """``(grad / (2 * result)).masked_fill_(result == 0, 0)`` of PyTorch's ``std_backward``."""
    zero = ops.data(result) == 0
    g = ops.div(grad, ops.mul(result, 2))
    return ops.masked_fill(g, zero, 0) if bool(zero.any()) else g


def _std_backward(grad: Any, self: Any, result: Any, dim: Any, correction: Any,
                  keepdim: bool, ops: Any) -> Any:
    gv = _std_grad_var(grad, result, ops)
    return _var_backward(gv, self, dim, correction, keepdim, ops)


def _std_jvp(t: Tensor, self: Tensor, result: Tensor, dim: Any, correction: Any,
             keepdim: bool) -> Tensor:
    vt = _var_jvp(t, self, dim, correction, keepdim)
    return _std_grad_var(vt, result)


defop("var", impl=_var_impl, params=("dim", "correction", "keepdim"), saves=("self",),
      vjp={"self": _var_backward}, jvp={"self": _var_jvp})

defop("std", impl=lambda self, dim=None, correction=None, keepdim=False: np.sqrt(
          _var_impl(self, dim, correction, keepdim)),
      params=("dim", "correction", "keepdim"), saves=("self", "result"),
      vjp={"self": _std_backward}, jvp={"self": _std_jvp})


def _var_mean_impl(self: Any, dim: Any = None, correction: Any = None,
                   keepdim: bool = False) -> tuple:
    return _var_impl(self, dim, correction, keepdim), _mean_impl(self, dim, keepdim)


def _std_mean_impl(self: Any, dim: Any = None, correction: Any = None,
                   keepdim: bool = False) -> tuple:
    var, mean = _var_mean_impl(self, dim, correction, keepdim)
    return np.sqrt(var), mean


def _var_mean_backward(grads: tuple, self: Any, dim: Any, correction: Any, keepdim: bool,
                       ops: Any) -> Any:
    """PyTorch's ``var_mean_backward``: the var and mean gradients, summed."""
    gvar, gmean = grads
    out = None if gvar is None else _var_backward(gvar, self, dim, correction, keepdim, ops)
    if gmean is not None:
        part = _mean_backward(gmean, self.shape, dim if dim else None, keepdim, ops)
        out = part if out is None else ops.add(out, part)
    return out


def _std_mean_backward(grads: tuple, self: Any, result: Any, dim: Any, correction: Any,
                       keepdim: bool, ops: Any) -> Any:
    gstd, gmean = grads
    gvar = None if gstd is None else _std_grad_var(gstd, result, ops)
    return _var_mean_backward((gvar, gmean), self, dim, correction, keepdim, ops)


def _mean_jvp(t: Tensor, dim: Any, keepdim: bool) -> Tensor:
    return t.mean(all_dims(dim, t.ndim), keepdim) if t.ndim else t  # type: ignore[attr-defined]


def _sum_jvp(t: Tensor, dim: Any, keepdim: bool) -> Tensor:
    return t.sum(all_dims(dim, t.ndim), keepdim) if t.ndim else t  # type: ignore[attr-defined]


defop("var_mean", impl=_var_mean_impl, params=("dim", "correction", "keepdim"), saves=("self",),
      num_outputs=2, vjp={"self": _var_mean_backward},
      jvp={"self": lambda t, self, dim, correction, keepdim: (
          _var_jvp(t, self, dim, correction, keepdim), _mean_jvp(t, dim, keepdim))})

defop("std_mean", impl=_std_mean_impl, params=("dim", "correction", "keepdim"),
      saves=("self", "result"), num_outputs=2, vjp={"self": _std_mean_backward},
      jvp={"self": lambda t, self, result, dim, correction, keepdim: (
          _std_jvp(t, self, result, dim, correction, keepdim), _mean_jvp(t, dim, keepdim))})


# ---------------------------------------------------------------- nansum / count_nonzero
def _nansum_impl(self: Any, dim: Any = None, keepdim: bool = False, dtype: Any = None) -> Any:
    return np.nansum(self, axis=_axis(dim, self), keepdims=keepdim, dtype=_int_to_long(self, dtype))


def _nansum_backward(grad: Any, self: Any, dim: Any, keepdim: bool, ops: Any) -> Any:
    x = ops.data(self)
    keep = x == x  # PyTorch's ``self.isnan().logical_not()``
    return ops.mul(_sum_backward(grad, x.shape, dim, keepdim, ops), ops.const(keep))


defop("nansum", impl=_nansum_impl, params=("dim", "keepdim", "dtype"), saves=("self",),
      vjp={"self": _nansum_backward},
      jvp={"self": lambda t, self, dim, keepdim: _sum_jvp(  # select: a nan tangent drops too
          t.where(const(self._data == self._data), 0.0), dim, keepdim)})

defop("count_nonzero", impl=lambda self, dim=None: namespace_of(self).asarray(
          np.count_nonzero(self, axis=_axis(dim, self)), dtype=np.int64),
      params=("dim",), nondifferentiable={"self": "integer result"}, jvp=NO_TANGENT)


# ---------------------------------------------------------------- logsumexp
def _logsumexp_impl(self: Any, dim: Any, keepdim: bool = False) -> Any:
    axis = _axis(dim, self)
    with np.errstate(divide="ignore", invalid="ignore"):
        if reduced_numel(self.shape, axis) == 0:  # log(0) = -inf, no max to subtract
            return np.log(np.sum(np.exp(self), axis=axis, keepdims=keepdim))
        # (complex: the largest real part, as PyTorch; NumPy would order lexicographically)
        m = np.amax(self.real if self.dtype.kind == "c" else self, axis=axis, keepdims=True)
        m = np.where(np.isinf(m), 0, m).astype(self.dtype, copy=False)  # PyTorch's inf guard
        out = np.log(np.sum(np.exp(self - m), axis=axis, keepdims=True)) + m
    return out if keepdim else out.reshape(_reduced_shape(self.shape, axis))


def _reduced_shape(shape: tuple, axis: Any) -> tuple:
    dims = all_dims(axis, len(shape))
    return tuple(s for i, s in enumerate(shape) if i not in dims)


def _logsumexp_backward(grad: Any, self: Any, result: Any, dim: Any, keepdim: bool,
                        ops: Any) -> Any:
    shape = self.shape
    g = restore(grad, shape, dim, keepdim, ops)
    return ops.mul(g, ops.exp(ops.sub(self, restore(result, shape, dim, keepdim, ops))))


def _logsumexp_jvp(t: Tensor, self: Tensor, result: Tensor, dim: Any, keepdim: bool) -> Tensor:
    r = restore(result, self._data.shape, dim, keepdim)
    w = t * (self - r).exp()  # type: ignore[attr-defined]
    dims = all_dims(dim, self.ndim)
    return w.sum(dims, keepdim) if dims else w  # type: ignore[attr-defined]


defop("logsumexp", impl=_logsumexp_impl, params=("dim", "keepdim"), saves=("self", "result"),
      vjp={"self": _logsumexp_backward}, jvp={"self": _logsumexp_jvp})


# ---------------------------------------------------------------- all / any
def _logical_reduce(fn_name: str) -> Any:
    def impl(self: Any, dim: Any = None, keepdim: bool = False) -> Any:
        axis = None if dim is None or self.ndim == 0 else tuple(dim)
        out = getattr(np, fn_name)(self, axis=axis, keepdims=keepdim)
        # PyTorch keeps uint8 for uint8 inputs (legacy behaviour), bool otherwise.
        return out.astype(np.uint8) if self.dtype == np.uint8 else out

    return impl


defop("all", impl=_logical_reduce("all"), params=("dim", "keepdim"),
      nondifferentiable={"self": "boolean result"}, jvp=NO_TANGENT)
defop("any", impl=_logical_reduce("any"), params=("dim", "keepdim"),
      nondifferentiable={"self": "boolean result"}, jvp=NO_TANGENT)


# ---------------------------------------------------------------- cumsum / cumprod
def _scan_impl(fn_name: str) -> Any:
    @quiet  # inf/nan inputs (inf + -inf, 0 * inf): PyTorch scans silently (NOTE [Quiet impls])
    def impl(self: Any, dim: int, dtype: Any = None) -> Any:
        out_dtype = _int_to_long(self, dtype)
        if self.ndim == 0:
            return self.astype(out_dtype) if out_dtype is not None else self.copy()
        # PyTorch's scans allocate a contiguous result whatever the input's layout
        out = getattr(np, fn_name)(self, axis=dim, dtype=out_dtype)
        return namespace_of(out).ascontiguousarray(out)

    return impl


def _reversed_cumsum(t: Any, dim: int, ops: Any) -> Any:
    return ops.flip(ops.cumsum(ops.flip(t, dim), dim), dim)


def _cumsum_backward(grad: Any, self_shape: tuple, dim: int, ops: Any) -> Any:
    if len(self_shape) == 0 or ops.data(grad).size <= 1 or self_shape[dim] == 1:
        return grad
    return _reversed_cumsum(grad, dim, ops)


def _onehot(n: int, k: int, ndim: int, dim: int, like: Any) -> Any:
    shape = [1] * ndim
    shape[dim] = n
    xp = xp_of(like)
    return (xp.arange(n) == k).astype(like.dtype).reshape(shape)


def _cumprod_zeros_raw(g: Any, x: Any, out: Any, dim: int) -> Any:
    """PyTorch's O(n) zero-aware ``cumprod_backward`` (first derivative only) on arrays."""
    xp = xp_of(x)
    is_zero = x == 0
    cz = xp.cumsum(is_zero, axis=dim)
    before = cz == 0  # positions before the first zero of their slice
    first = is_zero & (cz == 1)
    with np.errstate(invalid="ignore", divide="ignore"):
        head = _reversed_cumsum(out * g, dim, ARRAY_OPS) / xp.where(before, x, 1)
    grad = xp.where(before, head, 0)
    prefix = xp.prod(xp.where(before, x, 1), axis=dim, keepdims=True)
    after = xp.cumprod(xp.where(before | first, 1, x), axis=dim)  # prod of x in (z1, j]
    tail = xp.sum(g * after * (cz >= 1), axis=dim, keepdims=True)
    return xp.where(first, prefix * tail, grad).astype(x.dtype, copy=False)


def _cumprod_omitting(weights: Tensor, self: Tensor, dim: int, replace: Tensor | None) -> Tensor:
    """sum over k of weights * cumprod(self with x_k replaced) restricted to j >= k (O(n^2)).

    With `replace` None, x_k becomes 1 and the sum over j >= k gives the VJP at position k;
    with `replace` a tangent, x_k becomes t_k and the sum over k gives the JVP.
    """
    x = self._data
    n = x.shape[dim]
    xp = xp_of(x)
    shape = [1] * x.ndim
    shape[dim] = n
    total = None
    for k in range(n):
        hot = _onehot(n, k, x.ndim, dim, x)
        ge = const((xp.arange(n) >= k).astype(x.dtype).reshape(shape))
        sub = replace * const(hot) if replace is not None else const(hot)
        c = (self * const(1 - hot) + sub).cumprod(dim)  # type: ignore[attr-defined]
        # VJP: position k collects sum_j>=k w_j * d out_j/d x_k; JVP: out_j sums over k <= j.
        term = (weights * c * ge).sum(dim, True) * const(hot) if replace is None else c * ge
        total = term if total is None else total + term
    return total  # type: ignore[return-value]


def _cumprod_backward(grad: Any, self: Any, result: Any, dim: int, ops: Any) -> Any:
    """PyTorch's ``cumprod_backward``, with its zero-aware paths."""
    x = ops.data(self)
    if x.size <= 1 or x.shape[dim] == 1:
        return grad
    if not bool((x == 0).any()):
        return ops.div(_reversed_cumsum(ops.mul(result, grad), dim, ops), self)
    if ops.graph:
        # As PyTorch's cumprod_backward: when the gradient must be differentiable, the O(n^2)
        # formula (differentiable in every input); otherwise the O(n) one on the values.
        return _cumprod_omitting(grad, self, dim, None)
    return _cumprod_zeros_raw(grad, x, result, dim)


def _cumprod_jvp(t: Tensor, self: Tensor, result: Tensor, dim: int) -> Tensor:
    x = self._data
    if x.size <= 1 or x.shape[dim] == 1:
        return t
    if not bool((x == 0).any()):
        return (t / self).cumsum(dim) * result  # type: ignore[attr-defined]
    return _cumprod_omitting(t, self, dim, t)


defop("cumsum", impl=_scan_impl("cumsum"), params=("dim", "dtype"),
      vjp={"self": _cumsum_backward}, jvp="linear")

defop("cumprod", impl=_scan_impl("cumprod"), params=("dim", "dtype"), saves=("self", "result"),
      vjp={"self": _cumprod_backward}, jvp={"self": _cumprod_jvp})
