"""Linear-algebra primitives: mm, bmm, dot, mv, addmm, linalg_vector_norm.

``matmul``, ``outer`` and ``einsum`` are composites of these (`hookgrad._functional.linalg`),
built the way ATen builds them so that ``grad_fn`` chains match PyTorch's (``matmul`` of a batch
by a matrix folds into one ``mm`` between two ``_unsafe_view``s, for example).

The matrix-product rules are on the hot path of every MLP: with `ARRAY_OPS` (NOTE [Rule
operations]) each is a single array expression.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from hookgrad._backend import namespace_of
from hookgrad._ops._matmul import bmm_arrays, mm_arrays
from hookgrad._ops._rule_ops import TENSOR_OPS
from hookgrad._ops._rules import (
    all_dims,
    const,
    restore,
    xp_of,
)
from hookgrad._ops.registry import PRIMITIVES, defop
from hookgrad._tensor import Tensor


# ---------------------------------------------------------------- mm / bmm
# NOTE [mm gradient layout]: PyTorch's mm_mat1_backward/mm_mat2_backward return an operand's
# gradient column-major when the operand was column-major (strides ``(1, rows)``: a transposed
# matrix, e.g. ``F.linear``'s ``weight.t()``), as ``(other @ grad.T).T``. The callers
# (`hookgrad._functional.linalg`) pass the operands' layouts as the params ``*_cm``.
def _mm_self(grad: Any, mat2: Any, ops: Any, self_cm: bool = False) -> Any:
    if self_cm:
        return ops.t(ops.mm(mat2, ops.t(grad)))
    return ops.mm(grad, ops.t(mat2))


def _mm_mat2(grad: Any, self: Any, ops: Any, mat2_cm: bool = False) -> Any:
    if mat2_cm:
        return ops.t(ops.mm(ops.t(grad), self))
    return ops.mm(ops.t(self), grad)


def _mm_impl(self: Any, mat2: Any, self_cm: bool = False, mat2_cm: bool = False) -> Any:
    return mm_arrays(self, mat2)


defop("mm", impl=_mm_impl, inputs=("self", "mat2"), params=("self_cm", "mat2_cm"),
      saves=("mat2", "self"),
      vjp={"self": lambda grad, mat2, ops, self_cm: _mm_self(grad, mat2, ops, self_cm),
           "mat2": lambda grad, self, ops, mat2_cm: _mm_mat2(grad, self, ops, mat2_cm)},
      jvp={"self": lambda t, mat2: t.mm(mat2), "mat2": lambda t, self: self.mm(t)})

defop("bmm", impl=bmm_arrays, inputs=("self", "mat2"), saves=("mat2", "self"),
      vjp={"self": lambda grad, mat2, ops: ops.bmm(grad, ops.transpose(mat2, 1, 2)),
           "mat2": lambda grad, self, ops: ops.bmm(ops.transpose(self, 1, 2), grad)},
      jvp={"self": lambda t, mat2: t.bmm(mat2), "mat2": lambda t, self: self.bmm(t)})


# ---------------------------------------------------------------- dot / mv
defop("dot", impl=lambda self, tensor: namespace_of(self).asarray(np.dot(self, tensor)),
      inputs=("self", "tensor"), saves=("self", "tensor"),
      vjp={"self": lambda grad, tensor: grad * tensor, "tensor": lambda grad, self: grad * self},
      jvp={"self": lambda t, tensor: t.dot(tensor), "tensor": lambda t, self: self.dot(t)})

defop("mv", impl=mm_arrays, inputs=("self", "vec"), saves=("self", "vec"),
      vjp={"self": lambda grad, vec, ops: ops.outer(grad, vec),
           "vec": lambda grad, self, ops: ops.mv(ops.t(self), grad)},
      jvp={"self": lambda t, vec: t.mv(vec), "vec": lambda t, self: self.mv(t)})


# ---------------------------------------------------------------- addmm
def _addmm_impl(self: Any, mat1: Any, mat2: Any, beta: Any = 1, alpha: Any = 1,
                mat1_cm: bool = False, mat2_cm: bool = True) -> Any:
    out = mm_arrays(mat1, mat2)
    if alpha != 1:
        out *= alpha
    if beta == 1:
        out += self
    elif beta != 0:  # beta == 0 ignores self entirely (nan/inf in it do not propagate)
        out += beta * self
    return out


def _addmm_self(grad: Any, beta: Any, self_shape: tuple, ops: Any) -> Any:
    return ops.sum_to_size(grad if beta == 1 else ops.mul(grad, beta), self_shape)


def _addmm_mat1(grad: Any, mat2: Any, alpha: Any, mat1_cm: bool, ops: Any) -> Any:
    g = _mm_self(grad, mat2, ops, mat1_cm)
    return g if alpha == 1 else ops.mul(g, alpha)


def _addmm_mat2(grad: Any, mat1: Any, alpha: Any, mat2_cm: bool, ops: Any) -> Any:
    # NOTE [mm gradient layout]; the default is a transposed mat2 (``F.linear`` passes
    # ``weight.t()``): ``(grad.T @ mat1).T`` comes out of the transpose C-contiguous in the
    # weight's layout, so AccumulateGrad keeps it without a copy
    g = _mm_mat2(grad, mat1, ops, mat2_cm)
    return g if alpha == 1 else ops.mul(g, alpha)


defop("addmm", impl=_addmm_impl, inputs=("self", "mat1", "mat2"),
      params=("beta", "alpha", "mat1_cm", "mat2_cm"),
      saves=("mat1", "mat2"),
      vjp={"self": _addmm_self, "mat1": _addmm_mat1, "mat2": _addmm_mat2},
      jvp={"self": lambda t, beta, mat1_shape, mat2_shape: (t if beta == 1 else t * beta).expand(
               (mat1_shape[0], mat2_shape[1])),
           "mat1": lambda t, mat2, alpha: t.mm(mat2) * alpha,
           "mat2": lambda t, mat1, alpha: mat1.mm(t) * alpha})


# ---------------------------------------------------------------- matmul's reshapes
# ATen's matmul reshapes its mm/bmm result with _unsafe_view: a reshape whose output is *not* a
# view for autograd (own version counter), shown as UnsafeViewBackward0. Registered here unless
# the shape family already provides it.
if "_unsafe_view" not in PRIMITIVES:
    defop("_unsafe_view", impl=lambda self, size: np.reshape(self, size), params=("size",),
          vjp={"self": lambda grad, self_shape: grad.reshape(self_shape)}, jvp="linear")

# vector @ matrix is ``v.unsqueeze(0).mm(M).squeeze_(0)`` in ATen: the in-place squeeze of the
# fresh mm result renames its node SqueezeBackward4. The mm result is never seen by the user, so
# an out-of-place primitive with that node name is observably the same.
defop("_matmul_squeeze_", impl=lambda self, dim: np.squeeze(self, axis=dim), params=("dim",),
      node_name="SqueezeBackward4",
      vjp={"self": lambda grad, dim: grad.unsqueeze(dim)}, jvp="linear")


# ---------------------------------------------------------------- linalg_vector_norm
def _norm_impl(self: Any, ord: Any = 2, dim: Any = None, keepdim: bool = False,
               dtype: Any = None) -> Any:
    if dtype is not None and self.dtype != dtype.np:
        self = self.astype(dtype.np)
    axis = tuple(dim) if dim and self.ndim else None
    a = np.abs(self)
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        if ord == math.inf:
            return np.amax(a, axis=axis, keepdims=keepdim)
        if ord == -math.inf:
            return np.amin(a, axis=axis, keepdims=keepdim)
        if ord == 0:
            return np.sum(a != 0, axis=axis, keepdims=keepdim, dtype=self.dtype)
        if ord == 1:
            return np.sum(a, axis=axis, keepdims=keepdim)
        if ord == 2:
            return np.sqrt(np.sum(a * a, axis=axis, keepdims=keepdim))
        return np.sum(a**ord, axis=axis, keepdims=keepdim) ** (1.0 / ord)


def _masked_zero(t: Any, mask: Any, ops: Any) -> Any:
    """``t.masked_fill(mask, 0)``, skipped when nothing is masked (the common case)."""
    return ops.masked_fill(t, mask, 0) if bool(mask.any()) else t


def _norm_backward(grad: Any, self: Any, result: Any, ord: Any = 2, dim: Any = None,
                   keepdim: bool = False, ops: Any = TENSOR_OPS) -> Any:
    """PyTorch's ``norm_backward`` (``linalg_vector_norm_backward``)."""
    p = float(ord)
    if p == 0:
        return None  # PyTorch returns an undefined gradient: the input gets none
    x = ops.data(self)
    g = restore(grad, x.shape, dim, keepdim, ops)
    n = restore(result, x.shape, dim, keepdim, ops)
    zero_norm = ops.data(n) == 0
    if p == 1:
        return ops.mul(ops.sign(self), g)
    if p == 2:
        nonzero = _masked_zero(ops.div(self, n), xp_of(x).broadcast_to(zero_norm, x.shape), ops)
        return ops.mul(g, nonzero)
    if math.isinf(p):
        a = xp_of(x).abs(x)
        mask = (a == ops.data(n)) | xp_of(x).isnan(a)
        count = mask.sum(axis=tuple(all_dims(dim, x.ndim)), keepdims=True)
        count = ops.const(count.astype(x.dtype))
        return ops.mul(ops.sign(self), ops.mul(ops.div(g, count), ops.const(mask)))
    if p < 1:
        powed = _masked_zero(ops.pow(ops.abs(self), p - 1), x == 0, ops)
        return ops.mul(ops.mul(ops.mul(ops.sign(self), powed), g), ops.pow(n, 1 - p))
    absx = ops.abs(self)
    if p < 2:
        scaled = ops.mul(ops.sign(self), ops.pow(absx, p - 1))
    else:
        scaled = ops.mul(self, ops.pow(absx, p - 2))
    return ops.mul(scaled, _masked_zero(ops.div(g, ops.pow(n, p - 1)), zero_norm, ops))


def _norm_jvp(t: Tensor, self: Tensor, result: Tensor, ord: Any = 2, dim: Any = None,
              keepdim: bool = False) -> Tensor:
    if float(ord) == 0:
        return const(xp_of(result._data).zeros_like(result._data))
    ones = const(xp_of(result._data).ones_like(result._data))
    slope = _norm_backward(ones, self, result, ord, dim, keepdim)
    dims = all_dims(dim, self.ndim)
    w = slope * t  # type: ignore[operator]
    return w.sum(dims, keepdim) if dims else w  # type: ignore[attr-defined]


defop("linalg_vector_norm", impl=_norm_impl, params=("ord", "dim", "keepdim", "dtype"),
      saves=("self", "result"), vjp={"self": _norm_backward}, jvp={"self": _norm_jvp})
