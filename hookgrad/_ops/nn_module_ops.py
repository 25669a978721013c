"""Primitives used only by ``hookgrad.nn``: embedding, fused losses, ``_trilinear``.

Layer 3. Each is a primitive because PyTorch shows a distinct node for it (``EmbeddingBackward0``,
``MseLossBackward0``, ``NllLossBackward0``, ``NllLoss2DBackward0``,
``BinaryCrossEntropyBackward0``, ``BinaryCrossEntropyWithLogitsBackward0``,
``SmoothL1LossBackward0``, ``HuberLossBackward0``, ``TrilinearBackward0``). Reductions are
PyTorch's enum values (0 none, 1 mean, 2 sum). Rules are written with Tensor methods (resolved
at call time) so double backward works; constants derived from integer targets are plain
arrays wrapped as tensors that need no gradient.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from hookgrad._backend import NUMPY, has_data, namespace_of
from hookgrad._ops._add_at import add_rows_at
from hookgrad._ops._layout import iterator_layout
from hookgrad._ops._rules import api
from hookgrad._ops.registry import defop
from hookgrad._tensor import Tensor

NONE, MEAN, SUM = 0, 1, 2
_BCE_EPS = 1e-12


def _reduce(loss: Any, reduction: int) -> Any:
    xp = namespace_of(loss)
    if reduction == MEAN:
        if not loss.size:  # PyTorch: nan, silently (NumPy warns "Mean of empty slice")
            return xp.asarray(float("nan"), dtype=loss.dtype)
        return xp.asarray(loss.mean(), dtype=loss.dtype)
    if reduction == SUM:
        return xp.asarray(loss.sum(), dtype=loss.dtype)
    return loss


def _unreduced(loss: Any, reduction: int, order: tuple) -> Any:
    """`_reduce`, an unreduced loss laid out as PyTorch's TensorIterator over `order`."""
    return iterator_layout(loss, order) if reduction == NONE else _reduce(loss, reduction)


def _laid_out(t: Tensor, like: Tensor | None = None) -> Tensor:
    """A gradient in its ATen kernel's layout: row-major (``zeros_like(input,
    LEGACY_CONTIGUOUS_MEMORY_FORMAT)``) or, with `like`, ``empty_like(like)``'s."""
    if like is None:
        return t.contiguous()  # type: ignore[attr-defined]
    arr = iterator_layout(t._data, (like._data,))
    if arr is t._data:
        return t
    if not t.requires_grad:  # a plain backward: the values in the other layout
        return Tensor._make(arr)
    return like.new_empty(()).new_empty_strided(  # type: ignore[attr-defined]
        tuple(like.shape), tuple(s // arr.itemsize for s in arr.strides)).copy_(t)


def _scale(grad: Any, reduction: int, numel: int) -> Any:
    """The upstream gradient as the per-element factor of a reduced loss."""
    return grad / numel if reduction == MEAN and numel else grad


def _const(arr: Any) -> Tensor:
    return Tensor._make(arr)


def _numel(shape: tuple) -> int:
    n = 1
    for s in shape:
        n *= s
    return n


# ---------------------------------------------------------------- embedding
def _embedding_impl(weight: Any, indices: Any, padding_idx: int = -1,
                    scale_grad_by_freq: bool = False, sparse: bool = False) -> Any:
    return weight[indices]


def _embedding_backward_impl(grad_output: Any, indices: Any, num_weights: int,
                             padding_idx: int = -1, scale_grad_by_freq: bool = False) -> Any:
    xp = namespace_of(grad_output)
    dim = grad_output.shape[-1]
    flat_idx = indices.reshape(-1)
    g = grad_output.reshape(-1, dim)
    if scale_grad_by_freq:
        counts = xp.bincount(flat_idx, minlength=num_weights)
        g = g / counts[flat_idx][:, None]
    out = xp.zeros((num_weights, dim), dtype=grad_output.dtype)
    add_rows_at(out, flat_idx, g)  # NOTE [Row accumulation through flat indices]
    if padding_idx >= 0:
        out[padding_idx] = 0
    return out


def _embedding_backward_vjp(grad: Any, indices: Any, padding_idx: int,
                            scale_grad_by_freq: bool) -> Any:
    from hookgrad._dispatch import bind

    rows = bind(EMBEDDING, (grad, indices), {"padding_idx": padding_idx})
    idx = indices._data
    factor = namespace_of(idx).ones(idx.shape + (1,), dtype=grad._data.dtype)
    if padding_idx >= 0:
        factor[idx == padding_idx] = 0
    if scale_grad_by_freq:
        counts = namespace_of(idx).bincount(idx.reshape(-1), minlength=grad._data.shape[0])
        factor = factor / counts[idx][..., None]
    return rows * _const(factor.astype(grad._data.dtype))


EMBEDDING = defop(
    "embedding", impl=_embedding_impl, inputs=("weight", "indices"),
    params=("padding_idx", "scale_grad_by_freq", "sparse"), saves=("indices",),
    vjp={"weight": lambda grad, indices, weight_shape, padding_idx, scale_grad_by_freq: _bwd(
        grad, indices, weight_shape[0], padding_idx, scale_grad_by_freq)},
    nondifferentiable={"indices": "integer indices"},
    jvp={"weight": lambda t, indices: _embed(t, indices)},
)

EMBEDDING_BACKWARD = defop(
    "embedding_dense_backward", impl=_embedding_backward_impl,
    inputs=("grad_output", "indices"),
    params=("num_weights", "padding_idx", "scale_grad_by_freq"), saves=("indices",),
    vjp={"grad_output": lambda grad, indices, padding_idx, scale_grad_by_freq:
         _embedding_backward_vjp(grad, indices, padding_idx, scale_grad_by_freq)},
    nondifferentiable={"indices": "integer indices"},
    jvp="linear",
)


def _embed(weight: Any, indices: Any) -> Any:
    from hookgrad._dispatch import bind

    return bind(EMBEDDING, (weight, indices))


def _bwd(grad: Any, indices: Any, num_weights: int, padding_idx: int, scale: bool) -> Any:
    from hookgrad._dispatch import bind

    return bind(EMBEDDING_BACKWARD, (grad, indices), {
        "num_weights": num_weights, "padding_idx": padding_idx, "scale_grad_by_freq": scale})


# ---------------------------------------------------------------- regression losses
@NUMPY.quiet  # inf/nan inputs: no NumPy RuntimeWarning (NOTE [Quiet impls])
def _mse_impl(self: Any, target: Any, reduction: int = MEAN) -> Any:
    d = self - target
    return _unreduced(d * d, reduction, (self, target))


def _mse_grad(grad: Any, self: Any, target: Any, reduction: int) -> Any:
    return _laid_out(_scale(grad, reduction, _numel(self._data.shape)) * 2 * (self - target))


defop("mse_loss", impl=_mse_impl, inputs=("self", "target"), params=("reduction",),
      saves=("self", "target"),
      vjp={"self": _mse_grad,
           "target": lambda grad, self, target, reduction: -_mse_grad(grad, self, target,
                                                                      reduction)},
      jvp={"self": lambda t, self, target, reduction: _jvp_reduce(
               t * 2 * (self - target), reduction),
           "target": lambda t, self, target, reduction: _jvp_reduce(
               t * -2 * (self - target), reduction)})


def _jvp_reduce(x: Any, reduction: int) -> Any:
    if reduction == MEAN:
        return x.mean()
    return x.sum() if reduction == SUM else x


@NUMPY.quiet  # inf/nan inputs: no NumPy RuntimeWarning (NOTE [Quiet impls])
def _smooth_l1_impl(self: Any, target: Any, reduction: int = MEAN, beta: float = 1.0) -> Any:
    d = np.abs(self - target)
    loss = np.where(d < beta, 0.5 * d * d / beta if beta else 0 * d, d - 0.5 * beta)
    return _unreduced(loss.astype(self.dtype), reduction, (self, target))


def _smooth_l1_grad(grad: Any, self: Any, target: Any, reduction: int, beta: float) -> Any:
    d = self - target
    return _laid_out(_scale(grad, reduction, _numel(self._data.shape)) * d.clamp(-beta, beta)
                     / beta)


defop("smooth_l1_loss", impl=_smooth_l1_impl, inputs=("self", "target"),
      params=("reduction", "beta"), saves=("self", "target"),
      vjp={"self": _smooth_l1_grad,
           "target": lambda grad, self, target, reduction, beta: -_smooth_l1_grad(
               grad, self, target, reduction, beta)},
      jvp={"self": lambda t, self, target, reduction, beta: _jvp_reduce(
               t * (self - target).clamp(-beta, beta) / beta, reduction),
           "target": lambda t, self, target, reduction, beta: _jvp_reduce(
               -t * (self - target).clamp(-beta, beta) / beta, reduction)})


@NUMPY.quiet  # inf/nan inputs: no NumPy RuntimeWarning (NOTE [Quiet impls])
def _huber_impl(self: Any, target: Any, reduction: int = MEAN, delta: float = 1.0) -> Any:
    d = np.abs(self - target)
    loss = np.where(d < delta, 0.5 * d * d, delta * (d - 0.5 * delta))
    return _unreduced(loss.astype(self.dtype), reduction, (self, target))


def _same_dtype(own: Any, other: Any) -> None:
    # PyTorch's huber_loss_backward is a TensorIterator without type promotion (the forward
    # promotes): mixed dtypes fail in backward
    if own.dtype != other.dtype:
        raise RuntimeError(f"Found dtype {other.dtype.scalar_type} but expected "
                           f"{own.dtype.scalar_type}")


def _huber_grad(grad: Any, self: Any, target: Any, reduction: int, delta: float) -> Any:
    _same_dtype(self, target)
    d = self - target
    return _laid_out(_scale(grad, reduction, _numel(self._data.shape)) * d.clamp(-delta, delta))


defop("huber_loss", impl=_huber_impl, inputs=("self", "target"),
      params=("reduction", "delta"), saves=("self", "target"),
      vjp={"self": _huber_grad,
           "target": lambda grad, self, target, reduction, delta: (
               _same_dtype(target, self), -_huber_grad(grad, self, target, reduction, delta))[1]},
      jvp={"self": lambda t, self, target, reduction, delta: _jvp_reduce(
               t * (self - target).clamp(-delta, delta), reduction),
           "target": lambda t, self, target, reduction, delta: _jvp_reduce(
               -t * (self - target).clamp(-delta, delta), reduction)})


# ---------------------------------------------------------------- nll_loss
def _nll_parts(self: Any, target: Any, weight: Any, ignore_index: int) -> tuple:
    """(picked log-probs, per-element weights) with classes on axis 1 (or 0 for 1-D input)."""
    xp = namespace_of(self)
    axis = 0 if self.ndim == 1 else 1
    n_classes = self.shape[axis]
    if (self.ndim == 2 and weight is None and type(target) is np.ndarray
            and target.dtype == np.int64 and target.size and not 0 <= ignore_index < n_classes
            and target.min() >= 0 and target.max() < n_classes):
        # the common case, two reductions instead of six passes: every target is a class in
        # range, none is ignored (the general path below gives the same values)
        return self[np.arange(self.shape[0]), target], np.ones(target.shape, self.dtype), \
            target, axis
    tgt = target.astype(np.int64)
    valid = tgt != ignore_index
    safe = xp.where(valid, tgt, 0)
    bad = valid & ((tgt < 0) | (tgt >= n_classes))
    if has_data(bad) and bad.any():  # a meta target has no values to check
        raise IndexError(f"Target {int(tgt[bad].reshape(-1)[0])} is out of bounds.")
    if self.ndim == 2:  # (N, C): plain fancy indexing, far cheaper than take_along_axis
        picked = self[xp.arange(self.shape[0]), safe]
    else:
        picked = xp.take_along_axis(self, xp.expand_dims(safe, axis), axis=axis).squeeze(axis)
    if weight is None:
        wt = valid.astype(self.dtype)  # 1 where counted, 0 where ignored
    else:
        wt = xp.where(valid, weight._data[safe], 0).astype(self.dtype)
    return picked, wt, safe, axis


def _nll_impl(self: Any, target: Any, weight: Any = None, reduction: int = MEAN,
              ignore_index: int = -100) -> Any:
    picked, wt, _, _ = _nll_parts(self, target, weight, ignore_index)
    loss = -picked * wt
    valid = target != ignore_index
    if has_data(valid) and not valid.all():
        # ATen skips ignored targets (their output is 0): a NaN input there does not leak
        loss = namespace_of(loss).where(valid, loss, 0).astype(loss.dtype, copy=False)
    if reduction == MEAN:
        total = wt.sum()
        if not has_data(total) or total:  # np.errstate costs a microsecond: only for the 0/0 of all-ignored targets
            return namespace_of(loss).asarray(loss.sum() / total, dtype=self.dtype)
        with np.errstate(invalid="ignore", divide="ignore"):
            return namespace_of(loss).asarray(loss.sum() / total, dtype=self.dtype)
    return _reduce(loss, reduction)


def _nll_grad(grad: Any, self: Any, target: Any, weight: Any, reduction: int,
              ignore_index: int, ops: Any) -> Any:
    inp = ops.data(self)
    xp = namespace_of(inp)
    _, wt, safe, axis = _nll_parts(inp, ops.data(target), weight, ignore_index)
    coef = 0 - wt  # not -wt: an ignored entry's gradient is +0.0, as PyTorch never writes it
    if reduction == MEAN:
        total = wt.sum()
        if not has_data(total) or total:  # (a meta total has no value: the shape is the same)
            coef = coef / total
        else:  # 0/0: nan for counted targets of weight 0; ignored ones get no gradient, as
            with np.errstate(invalid="ignore", divide="ignore"):  # PyTorch's kernel skips them
                coef = xp.where(ops.data(target) != ignore_index, coef / total, 0)
    fold = not ops.graph and reduction != NONE and type(grad) is np.ndarray
    if fold:  # arrays, a 0-d grad: scaled into the picked entries, the rest stays +0.0 as in
        coef = coef * grad  # PyTorch's kernel (one pass less than grad * mask)
        if not np.isfinite(grad).all():  # ignored targets are never written (no 0 * nan)
            coef = xp.where(ops.data(target) != ignore_index, coef, 0)
    mask = xp.zeros(inp.shape, dtype=inp.dtype)
    if mask.ndim == 2:
        mask[xp.arange(mask.shape[0]), safe] = coef
    else:
        xp.put_along_axis(mask, xp.expand_dims(safe, axis), xp.expand_dims(coef, axis), axis=axis)
    if fold:
        return mask
    g = grad if reduction != NONE or inp.ndim == 1 else ops.unsqueeze(grad, axis)
    out = ops.mul(g, ops.const(mask))
    gd = ops.data(grad)
    if has_data(gd) and not xp.isfinite(gd).all():
        # PyTorch's kernel writes only the counted targets' entries: a nan/inf incoming
        # gradient leaves every other entry 0 (the product with the mask's zeros would not)
        written = xp.zeros(mask.shape, dtype=bool)
        valid = ops.data(target) != ignore_index
        if written.ndim == 2:
            written[xp.arange(written.shape[0]), safe] = valid
        else:
            xp.put_along_axis(written, xp.expand_dims(safe, axis), xp.expand_dims(valid, axis),
                              axis=axis)
        out = ops.masked_fill(out, ~written, 0)
    return out


for _name, _node in (("nll_loss", "NllLossBackward0"), ("nll_loss2d", "NllLoss2DBackward0")):
    defop(_name, impl=_nll_impl, inputs=("self", "target"),
          params=("weight", "reduction", "ignore_index"), saves=("self", "target"),
          node_name=_node,
          # NOTE [Double-backward reads]: nll_loss_backward's `self: zeros_like(grad)`
          double_reads={"self": ("self",)}, double_zero=True,
          vjp={"self": lambda grad, self, target, weight, reduction, ignore_index, ops: _nll_grad(
              grad, self, target, weight, reduction, ignore_index, ops)},
          nondifferentiable={"target": "integer class indices"},
          jvp={"self": lambda t, self, target, weight, reduction, ignore_index: _nll_jvp(
              t, target, weight, reduction, ignore_index)})


def _nll_jvp(t: Any, target: Any, weight: Any, reduction: int, ignore_index: int) -> Any:
    from hookgrad._dispatch import bind
    from hookgrad._ops.registry import PRIMITIVES

    return bind(PRIMITIVES["nll_loss"], (t, target), {
        "weight": weight, "reduction": reduction, "ignore_index": ignore_index})


# ---------------------------------------------------------------- binary cross entropy
def _bce_impl(self: Any, target: Any, weight: Any = None, reduction: int = MEAN) -> Any:
    if self.dtype != target.dtype:  # PyTorch's kernel does not promote
        from hookgrad._dtypes import from_numpy_dtype

        raise RuntimeError(f"Found dtype {from_numpy_dtype(target.dtype).scalar_type} but "
                           f"expected {from_numpy_dtype(self.dtype).scalar_type}")
    # (meta: no values to check; nan fails the check too, as ATen tests 0 <= x <= 1)
    if has_data(self) and not ((self >= 0) & (self <= 1)).all():
        raise RuntimeError("all elements of input should be between 0 and 1")
    if has_data(target) and not ((target >= 0) & (target <= 1)).all():
        raise RuntimeError("all elements of target should be between 0 and 1")
    with np.errstate(divide="ignore"):
        log_x = np.maximum(np.log(self), -100)
        log_1mx = np.maximum(np.log1p(-self), -100)
    loss = -(target * log_x + (1 - target) * log_1mx)
    if weight is not None:
        loss = loss * weight._data
    # PyTorch builds the loss in place on ``1 - target``: the target's dtype wins
    return _unreduced(loss.astype(target.dtype), reduction, (self, target))


def _bce_grad(grad: Any, self: Any, target: Any, weight: Any, reduction: int) -> Any:
    g = _scale(grad, reduction, _numel(self._data.shape))
    out = g * (self - target) / ((1 - self) * self).clamp(min=_BCE_EPS)
    return _laid_out(out if weight is None else out * weight, self)


def _bce_target_grad(grad: Any, self: Any, weight: Any, reduction: int) -> Any:
    g = _scale(grad, reduction, _numel(self._data.shape))
    out = g * ((-self).log1p().clamp(min=-100) - self.log().clamp(min=-100))
    return _laid_out(out if weight is None else out * weight, self)


defop("binary_cross_entropy", impl=_bce_impl, inputs=("self", "target"),
      params=("weight", "reduction"), saves=("self", "target"),
      vjp={"self": _bce_grad,
           "target": lambda grad, self, weight, reduction: _bce_target_grad(
               grad, self, weight, reduction)},
      jvp={"self": lambda t, self, target, weight, reduction: _jvp_reduce(
               _bce_grad(t, self, target, weight, NONE), reduction),
           "target": lambda t, self, weight, reduction: _jvp_reduce(
               _bce_target_grad(t, self, weight, NONE), reduction)})


@NUMPY.quiet  # inf/nan inputs: no NumPy RuntimeWarning (NOTE [Quiet impls])
def _bcel_impl(self: Any, target: Any, weight: Any = None, pos_weight: Any = None,
               reduction: int = MEAN) -> Any:
    softplus_neg = np.log1p(np.exp(-np.abs(self))) + np.maximum(-self, 0)
    if pos_weight is not None:
        log_weight = (pos_weight._data - 1) * target + 1
        loss = (1 - target) * self + log_weight * softplus_neg
    else:
        loss = (1 - target) * self + softplus_neg
    if weight is not None:
        loss = loss * weight._data
    # PyTorch builds the loss in place on ``1 - target``: the target's dtype and layout win
    return _unreduced(loss.astype(target.dtype), reduction, (target,))


def _bcel_grad(grad: Any, self: Any, target: Any, weight: Any, pos_weight: Any,
               reduction: int) -> Any:
    g = _scale(grad, reduction, _numel(self._data.shape))
    if pos_weight is not None:
        t = pos_weight * target
        out = g * ((t + 1 - target) * self.sigmoid() - t)
    else:  # ATen's kernel: the result takes the input's layout
        out = _laid_out(g * (self.sigmoid() - target), self)
    return out if weight is None else out * weight


def _softplus_neg(x: Any) -> Any:
    """``log(1 + exp(-x))``, stably, with Tensor methods."""
    return (-x).relu() + (-x.abs()).exp().log1p()


def _bcel_target_grad(grad: Any, self: Any, weight: Any, pos_weight: Any,
                      reduction: int) -> Any:
    g = _scale(grad, reduction, _numel(self._data.shape))
    if pos_weight is not None:
        out = _laid_out(g * (-self + (pos_weight - 1) * _softplus_neg(self)))  # row-major
    else:
        out = _laid_out(g * -self, self)
    return out if weight is None else out * weight


defop("binary_cross_entropy_with_logits", impl=_bcel_impl, inputs=("self", "target"),
      params=("weight", "pos_weight", "reduction"), saves=("self", "target"),
      vjp={"self": _bcel_grad,
           "target": lambda grad, self, weight, pos_weight, reduction: _bcel_target_grad(
               grad, self, weight, pos_weight, reduction)},
      jvp={"self": lambda t, self, target, weight, pos_weight, reduction: _jvp_reduce(
               _bcel_grad(t, self, target, weight, pos_weight, NONE), reduction),
           "target": lambda t, self, weight, pos_weight, reduction: _jvp_reduce(
               _bcel_target_grad(t, self, weight, pos_weight, NONE), reduction)})


# ---------------------------------------------------------------- _trilinear
def _einsum_spec(equation: str, k: int) -> str:
    """Equation for the gradient of operand `k`: the gradient replaces it, its indices out."""
    lhs, out = equation.split("->")
    ops = lhs.split(",")
    target = ops[k]
    ops[k] = out
    return ",".join(ops) + "->" + target


def _trilinear_impl(i1: Any, i2: Any, i3: Any, equation: str) -> Any:
    return namespace_of(i1).einsum(equation, i1, i2, i3)


def _trilinear_vjp(k: int) -> Any:
    def rule(grad: Any, i1: Any, i2: Any, i3: Any, equation: str) -> Any:
        from hookgrad._dispatch import bind

        ops = [i1, i2, i3]
        ops[k] = grad
        return bind(TRILINEAR, tuple(ops), {"equation": _einsum_spec(equation, k)})

    return rule


def _trilinear_jvp(k: int) -> Any:
    def rule(t: Any, i1: Any, i2: Any, i3: Any, equation: str) -> Any:
        from hookgrad._dispatch import bind

        ops = [i1, i2, i3]
        ops[k] = t
        return bind(TRILINEAR, tuple(ops), {"equation": equation})

    return rule


TRILINEAR = defop(
    "_trilinear", impl=_trilinear_impl, inputs=("i1", "i2", "i3"), params=("equation",),
    saves=("i1", "i2", "i3"), node_name="TrilinearBackward0",
    vjp={"i1": _trilinear_vjp(0), "i2": _trilinear_vjp(1), "i3": _trilinear_vjp(2)},
    jvp={"i1": _trilinear_jvp(0), "i2": _trilinear_jvp(1), "i3": _trilinear_jvp(2)},
)


# ---------------------------------------------------------------- prelu
def _prelu_masks(self: Any) -> tuple:
    pos = (self._data > 0).astype(self._data.dtype)
    return _const(pos), _const(1 - pos)


def _prelu_self_grad(grad: Any, self: Any, weight: Any) -> Any:
    pos, neg = _prelu_masks(self)
    return grad * (pos + neg * weight)


def _prelu_weight_grad(grad: Any, self: Any, weight: Any, weight_shape: tuple) -> Any:
    # `weight` unused: named so it is saved whichever input needs a gradient, as PyTorch's one
    # joint formula (_prelu_kernel_backward(grad, self, weight)) saves both
    _, neg = _prelu_masks(self)
    return (grad * self * neg).sum_to_size(weight_shape)


defop("_prelu_kernel", impl=lambda self, weight: np.where(self > 0, self, weight * self),
      inputs=("self", "weight"), saves=("self", "weight"), node_name="PreluKernelBackward0",
      # NOTE [Double-backward reads]: _prelu_kernel_backward's double backward gives zeros
      double_reads=dict.fromkeys(("self", "weight"), ("self", "weight")), double_zero=True,
      vjp={"self": _prelu_self_grad, "weight": _prelu_weight_grad},
      jvp={"self": lambda t, self, weight: _prelu_self_grad(t, self, weight),
           "weight": lambda t, self: t * self * _prelu_masks(self)[1]})


# ---------------------------------------------------------------- Tensor-Scalar arithmetic
# PyTorch's C++ loss composites call the ``mul.Scalar``/``div.Scalar`` overloads, whose nodes are
# MulBackward1/DivBackward1 (Python's ``t * 2`` wraps the number and shows MulBackward0).
defop("_nn_mul_scalar", impl=lambda self, other: self * np.asarray(other, self.dtype),
      params=("other",), node_name="MulBackward1",
      vjp={"self": lambda grad, other: grad * other}, jvp="linear")

defop("_nn_div_scalar", impl=lambda self, other: self / np.asarray(other, self.dtype),
      params=("other",), node_name="DivBackward1",
      vjp={"self": lambda grad, other: grad / other}, jvp="linear")

defop("_nn_add_scalar", impl=lambda self, other: self + np.asarray(other, self.dtype),
      params=("other",), node_name="AddBackward1",
      vjp={"self": lambda grad: grad}, jvp={"self": lambda t: t})  # affine, not linear


# ---------------------------------------------------------------- glu
def _glu_halves(x: Any, dim: int) -> tuple:
    n = x.shape[dim] // 2
    return x.narrow(dim, 0, n), x.narrow(dim, n, n)


@NUMPY.quiet  # inf/nan inputs: no NumPy RuntimeWarning (NOTE [Quiet impls])
def _glu_impl(self: Any, dim: int) -> Any:
    a, b = np.split(self, 2, axis=dim)
    return a / (1 + np.exp(-b))


def _glu_vjp(grad: Any, self: Any, dim: int) -> Any:
    a, b = _glu_halves(self, dim)
    sig = b.sigmoid()
    return api().cat([grad * sig, grad * a * sig * (1 - sig)], dim)


def _glu_jvp(t: Any, self: Any, dim: int) -> Any:
    a, b = _glu_halves(self, dim)
    ta, tb = _glu_halves(t, dim)
    sig = b.sigmoid()
    return ta * sig + a * sig * (1 - sig) * tb


defop("glu", impl=_glu_impl, params=("dim",), saves=("self",),
      vjp={"self": _glu_vjp}, jvp={"self": _glu_jvp})
