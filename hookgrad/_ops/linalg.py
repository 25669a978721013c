"""Linear-algebra primitives: mm, bmm, dot, mv, addmm, linalg_vector_norm.

``matmul``, ``outer`` and ``einsum`` are composites of these (`hookgrad._functional.linalg`),
built the way ATen builds them so that ``grad_fn`` chains match PyTorch's (``matmul`` of a batch
by a matrix folds into one ``mm`` between two ``_unsafe_view``s, for example).

The matrix-product rules are on the hot path of every MLP, so their raw bodies are a single
array expression (NOTE [Raw backward]).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from hookgrad._backend import namespace_of
from hookgrad._ops._rules import (
    all_dims,
    const,
    raw_backward,
    restore,
    restore_arr,
    xp_of,
)
from hookgrad._ops.registry import PRIMITIVES, defop
from hookgrad._tensor import Tensor


def _mT(a: Any) -> Any:
    return a.swapaxes(-1, -2)


# ---------------------------------------------------------------- mm / bmm
def _mm_self(grad: Tensor, mat2: Tensor) -> Tensor:
    if raw_backward():
        return const(grad._data @ _mT(mat2._data))
    return grad.mm(mat2.t())  # type: ignore[attr-defined]


def _mm_mat2(grad: Tensor, self: Tensor) -> Tensor:
    if raw_backward():
        return const(_mT(self._data) @ grad._data)
    return self.t().mm(grad)  # type: ignore[attr-defined]


defop("mm", impl=np.matmul, inputs=("self", "mat2"), saves=("mat2", "self"),
      vjp={"self": _mm_self, "mat2": _mm_mat2},
      jvp={"self": lambda t, mat2: t.mm(mat2), "mat2": lambda t, self: self.mm(t)})


def _bmm_self(grad: Tensor, mat2: Tensor) -> Tensor:
    if raw_backward():
        return const(grad._data @ _mT(mat2._data))
    return grad.bmm(mat2.transpose(1, 2))  # type: ignore[attr-defined]


def _bmm_mat2(grad: Tensor, self: Tensor) -> Tensor:
    if raw_backward():
        return const(_mT(self._data) @ grad._data)
    return self.transpose(1, 2).bmm(grad)  # type: ignore[attr-defined]


defop("bmm", impl=np.matmul, inputs=("self", "mat2"), saves=("mat2", "self"),
      vjp={"self": _bmm_self, "mat2": _bmm_mat2},
      jvp={"self": lambda t, mat2: t.bmm(mat2), "mat2": lambda t, self: self.bmm(t)})


# ---------------------------------------------------------------- dot / mv
defop("dot", impl=lambda self, tensor: namespace_of(self).asarray(np.dot(self, tensor)),
      inputs=("self", "tensor"), saves=("self", "tensor"),
      vjp={"self": lambda grad, tensor: grad * tensor, "tensor": lambda grad, self: grad * self},
      jvp={"self": lambda t, tensor: t.dot(tensor), "tensor": lambda t, self: self.dot(t)})


def _mv_self(grad: Tensor, vec: Tensor) -> Tensor:
    if raw_backward():
        return const(grad._data[:, None] * vec._data)
    return grad.outer(vec)  # type: ignore[attr-defined]


def _mv_vec(grad: Tensor, self: Tensor) -> Tensor:
    if raw_backward():
        return const(_mT(self._data) @ grad._data)
    return self.t().mv(grad)  # type: ignore[attr-defined]


defop("mv", impl=np.matmul, inputs=("self", "vec"), saves=("self", "vec"),
      vjp={"self": _mv_self, "vec": _mv_vec},
      jvp={"self": lambda t, vec: t.mv(vec), "vec": lambda t, self: self.mv(t)})


# ---------------------------------------------------------------- addmm
def _addmm_impl(self: Any, mat1: Any, mat2: Any, beta: Any = 1, alpha: Any = 1) -> Any:
    out = mat1 @ mat2
    if alpha != 1:
        out *= alpha
    if beta == 1:
        out += self
    elif beta != 0:  # beta == 0 ignores self entirely (nan/inf in it do not propagate)
        out += beta * self
    return out


def _unbroadcast_raw(g: Any, shape: tuple) -> Any:
    if g.shape == shape:
        return g
    lead = g.ndim - len(shape)
    axes = tuple(range(lead)) + tuple(
        lead + i for i, s in enumerate(shape) if s == 1 and g.shape[lead + i] != 1)
    return g.sum(axis=axes, keepdims=True).reshape(shape)


def _addmm_self(grad: Tensor, beta: Any, self_shape: tuple) -> Tensor:
    if raw_backward():
        g = grad._data if beta == 1 else grad._data * beta
        return const(_unbroadcast_raw(g, tuple(self_shape)))
    g = grad if beta == 1 else grad * beta
    return g if g._data.shape == self_shape else g.sum_to_size(self_shape)  # type: ignore


def _addmm_mat1(grad: Tensor, mat2: Tensor, alpha: Any) -> Tensor:
    g = _mm_self(grad, mat2)
    return g if alpha == 1 else g * alpha


def _addmm_mat2(grad: Tensor, mat1: Tensor, alpha: Any) -> Tensor:
    if raw_backward() and alpha == 1:
        # ``F.linear`` passes ``weight.t()`` as mat2. Computed as the transpose of
        # ``grad.T @ mat1`` (PyTorch's mm_mat2_backward for a transposed mat2), the gradient
        # comes out of TBackward C-contiguous, and AccumulateGrad keeps it without a copy.
        return const(_mT(_mT(grad._data) @ mat1._data))
    g = _mm_mat2(grad, mat1)
    return g if alpha == 1 else g * alpha


defop("addmm", impl=_addmm_impl, inputs=("self", "mat1", "mat2"), params=("beta", "alpha"),
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


def _norm_backward_raw(g: Any, x: Any, n: Any, p: float, dim: Any) -> Any:
    xp = xp_of(x)
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        if p == 1:
            return xp.sign(x) * g
        if p == 2:
            return g * xp.where(n == 0, 0, x / n)
        if math.isinf(p):
            a = xp.abs(x)
            mask = (a == n) | xp.isnan(a)
            count = xp.sum(mask, axis=tuple(all_dims(dim, x.ndim)), keepdims=True)
            return xp.sign(x) * ((g / count) * mask)
        if p < 1:
            scaled = xp.sign(x) * xp.where(x == 0, 0, xp.abs(x) ** (p - 1))
            return scaled * g * n ** (1 - p)
        scaled = xp.sign(x) * xp.abs(x) ** (p - 1) if p < 2 else x * xp.abs(x) ** (p - 2)
        return scaled * xp.where(n == 0, 0, g / n ** (p - 1))


def _masked_zero(t: Tensor, mask: Any) -> Tensor:
    """``t.masked_fill(mask, 0)``, skipped when nothing is masked (the common case)."""
    return t.masked_fill(const(mask), 0) if bool(mask.any()) else t  # type: ignore


def _norm_backward_graph(g: Tensor, self: Tensor, n: Tensor, p: float, dim: Any) -> Tensor:
    x = self._data
    if p == 1:
        return self.sign() * g  # type: ignore[attr-defined]
    if p == 2:
        return g * _masked_zero(self / n, xp_of(x).broadcast_to(n._data == 0, x.shape))
    if math.isinf(p):
        a = xp_of(x).abs(x)
        mask = (a == n._data) | xp_of(x).isnan(a)
        count = mask.sum(axis=tuple(all_dims(dim, x.ndim)), keepdims=True)
        return self.sign() * ((g / const(count.astype(x.dtype))) * const(mask))  # type: ignore
    if p < 1:
        powed = _masked_zero(self.abs().pow(p - 1), x == 0)  # type: ignore[attr-defined]
        return self.sign() * powed * g * n.pow(1 - p)  # type: ignore[attr-defined]
    absx = self.abs()  # type: ignore[attr-defined]
    scaled = self.sign() * absx.pow(p - 1) if p < 2 else self * absx.pow(p - 2)  # type: ignore
    return scaled * _masked_zero(g / n.pow(p - 1), n._data == 0)  # type: ignore[attr-defined]


def _norm_backward(grad: Tensor, self: Tensor, result: Tensor, ord: Any = 2, dim: Any = None,
                   keepdim: bool = False) -> Tensor | None:
    """PyTorch's ``norm_backward`` (``linalg_vector_norm_backward``)."""
    p = float(ord)
    if p == 0:
        return None  # PyTorch returns an undefined gradient: the input gets none
    shape = self._data.shape
    if raw_backward():
        g = restore_arr(grad._data, shape, dim, keepdim)
        n = restore_arr(result._data, shape, dim, keepdim)
        return const(_norm_backward_raw(g, self._data, n, p, dim).astype(
            np.result_type(self._data, grad._data), copy=False))
    g = restore(grad, shape, dim, keepdim)
    return _norm_backward_graph(g, self, restore(result, shape, dim, keepdim), p, dim)


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
