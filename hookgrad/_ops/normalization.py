"""Normalization primitives: ``native_batch_norm``, ``native_layer_norm``, ``native_group_norm``.

Layer 3. Each returns ``(output, mean, invstd)`` like its ATen op (the statistics are
non-differentiable outputs) and shows PyTorch's node (``NativeBatchNormBackward0``...). Missing
affine parameters or running statistics are passed as empty constant tensors, which gives the
node PyTorch's ``(None, 0)`` edges.

NOTE [Normalization rules]
All three share one input-gradient formula over their reduction axes R (``x̂`` the normalized
input, ``r`` the inverse standard deviation, ``ĝ = grad * weight``)::

    grad_input = r * (ĝ - mean_R(ĝ) - x̂ * mean_R(ĝ * x̂))

A plain ``backward()`` evaluates it on arrays with the saved statistics. Under ``create_graph``
the saved statistics are *not* used: they are non-differentiable outputs, so the rule recomputes
mean, ``r`` and ``x̂`` from the saved input with hookgrad ops, which makes the formula
differentiable in the input as well (PyTorch writes a dedicated ``batchnorm_double_backward``
for the same reason). Batch norm in evaluation mode normalizes with the running statistics,
which are constants: its input gradient is just ``ĝ * r``.

``native_batch_norm`` updates the running statistics in place, as the ATen kernel does, and
like it leaves their version counters alone (saving them for backward stays valid).

The rules save what PyTorch saves, in its pack order (``result1``/``result2`` are the
statistics); an absent weight/bias/running statistic is an empty placeholder marked ``_absent``,
which saved-tensor hooks never see (PyTorch saves nothing for a None). PyTorch's third derivatives of batch and layer norm are wrong (its
double-backward formulas treat the saved statistics as constants; its own ``gradcheck`` of the
second derivative fails); hookgrad's are exact, so they differ from PyTorch's at third order.
"""

from __future__ import annotations

import inspect
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

from hookgrad._backend import namespace_of
from hookgrad._ops._elementwise import quiet
from hookgrad._ops._rowsum import row_sum
from hookgrad._ops._rules import const
from hookgrad._ops.registry import defop
from hookgrad._tensor import Tensor

Axes = tuple[int, ...]


# ---------------------------------------------------------------- shared helpers
def _mean(a: Any, axes: Axes) -> Any:
    if isinstance(a, Tensor):
        return a.mean(axes, True)  # type: ignore[attr-defined]
    if not a.size:  # the mean of nothing: nan, without NumPy's warning (PyTorch is silent)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            return a.mean(axis=axes, keepdims=True)
    return a.mean(axis=axes, keepdims=True)


def _sum(a: Any, axes: Axes) -> Any:
    if isinstance(a, Tensor):
        return a.sum(axes)  # type: ignore[attr-defined]
    return a.sum(axis=axes)


def input_grad(gw: Any, xhat: Any, rstd: Any, axes: Axes) -> Any:
    """NOTE [Normalization rules] on arrays or tensors alike."""
    return rstd * (gw - _mean(gw, axes) - xhat * _mean(gw * xhat, axes))


def input_tangent(t: Any, xhat: Any, rstd: Any, axes: Axes) -> Any:
    """The input JVP of normalization: the same projection as `input_grad` (it is symmetric)."""
    return input_grad(t, xhat, rstd, axes)


def graph_stats(x: Tensor, axes: Axes, eps: float) -> tuple[Tensor, Tensor]:
    """``(x̂, r)`` recomputed differentiably from `x` (NOTE [Normalization rules])."""
    centered = x - x.mean(axes, True)  # type: ignore[attr-defined]
    rstd = ((centered * centered).mean(axes, True) + eps).rsqrt()  # type: ignore[attr-defined]
    return centered * rstd, rstd


def _empty_like(a: Any) -> Any:
    return namespace_of(a).zeros((0,), dtype=a.dtype)


def _bcast(a: Any, ndim: int) -> Any:
    """A per-channel vector shaped ``[1, C, 1, ...]`` to broadcast against ``[N, C, ...]``."""
    shape = (1, -1) + (1,) * (ndim - 2)
    return a.reshape(shape)


def _affine(out: Any, weight: Any, bias: Any, shape: Sequence[int]) -> Any:
    if weight.size:
        out *= weight.reshape(shape)
    if bias.size:
        out += bias.reshape(shape)
    return out


def _chan_axes(ndim: int) -> Axes:
    return (0, *range(2, ndim))


# ---------------------------------------------------------------- batch norm
@quiet  # inf/nan inputs: PyTorch computes nan silently (NOTE [Quiet impls])
def _bn_impl(
    input: Any,
    weight: Any,
    bias: Any,
    running_mean: Any,
    running_var: Any,
    training: bool,
    momentum: float,
    eps: float,
) -> tuple[Any, Any, Any]:
    xp = namespace_of(input)
    axes = _chan_axes(input.ndim)
    shape = (1, -1) + (1,) * (input.ndim - 2)
    dt = input.dtype
    if training:  # ATen's collect_stats: sums in double, the mean rounded to the input's dtype
        with warnings.catch_warnings():
            if not input.size:  # NumPy warns about the mean of nothing; PyTorch gives nan
                warnings.simplefilter("ignore", RuntimeWarning)
            n = input.size // max(input.shape[1], 1)
            mean = (input.sum(axis=axes, dtype=xp.float64) / n).astype(dt)
            centered = input - mean.reshape(shape)
            var_sum = (centered * centered).sum(axis=axes, dtype=xp.float64)
            invstd = (1.0 / xp.sqrt(var_sum / n + eps)).astype(dt)
        if running_mean.size:
            running_mean *= 1 - momentum
            running_mean += momentum * mean
        if running_var.size:
            running_var *= 1 - momentum
            running_var += momentum * var_sum / max(n - 1, 1)
        saved = (mean, invstd)
    else:
        mean = running_mean
        invstd = 1.0 / xp.sqrt(running_var + xp.asarray(eps, dtype=running_var.dtype))
        saved = (_empty_like(input), _empty_like(input))
    # ATen's transform: out = fma(x, alpha, beta) per channel, alpha = invstd * weight and
    # beta = bias - mean * alpha in the input's dtype; float32's fma is exact in double
    alpha = (invstd * weight if weight.size else invstd).astype(dt, copy=False)
    beta = ((bias if bias.size else 0) - mean * alpha).astype(dt, copy=False)
    if dt == xp.float32:
        out = (input.astype(xp.float64) * alpha.reshape(shape) + beta.reshape(shape)).astype(dt)
    else:
        out = (input * alpha.reshape(shape) + beta.reshape(shape)).astype(dt, copy=False)
    # empty_like(input, suggest_memory_format()): row-major unless the input is channels-last
    if not _channels_last(input):
        out = xp.ascontiguousarray(out)
    return out, *saved


def _channels_last(a: Any) -> bool:
    """ATen's ``suggest_memory_format() != Contiguous``: a 4-d/5-d input strided NHWC/NDHWC."""
    if a.ndim not in (4, 5) or a.flags.c_contiguous:
        return False
    return a.transpose(0, *range(2, a.ndim), 1).flags.c_contiguous


@quiet  # inf/nan inputs: PyTorch computes nan silently (NOTE [Quiet impls])
def _bn_xhat(
    input: Any, running_mean: Any, running_var: Any, result1: Any, result2: Any,
    training: bool, eps: float, ops: Any,
) -> tuple[Any, Any]:
    """``(x̂, r)`` as rule values (arrays with `ARRAY_OPS`, tensors with `TENSOR_OPS`)."""
    nd = input.ndim
    if not training:
        rstd = (ops.data(running_var) + eps) ** -0.5
        rm = _bcast(ops.data(running_mean), nd)
        r = ops.const(_bcast(rstd, nd).astype(ops.data(input).dtype, copy=False))
        return ops.mul(ops.sub(input, ops.const(rm)), r), r
    if ops.graph:  # NOTE [Normalization rules]: recomputed, differentiable in the input
        return graph_stats(input, _chan_axes(nd), eps)
    mean, invstd = _bcast(result1, nd), _bcast(result2, nd)
    return (input - mean) * invstd, invstd


def _bn_input_grad(
    grads: tuple,
    input: Any,
    weight: Any,
    running_mean: Any,
    running_var: Any,
    result1: Any,
    result2: Any,
    training: bool,
    eps: float,
    ops: Any,
) -> Any:
    g = grads[0]  # multi-output op: outputs 1, 2 (statistics) get no gradient
    nd = input.ndim
    xhat, rstd = _bn_xhat(input, running_mean, running_var, result1, result2, training, eps, ops)
    if ops.data(weight).size:
        g = ops.mul(g, ops.reshape(weight, (1, -1) + (1,) * (nd - 2)))
    return input_grad(g, xhat, rstd, _chan_axes(nd)) if training else ops.mul(g, rstd)


def _bn_weight_grad(
    grads: tuple,
    input: Any,
    running_mean: Any,
    running_var: Any,
    result1: Any,
    result2: Any,
    training: bool,
    eps: float,
    ops: Any,
) -> Any:
    grad = grads[0]  # multi-output op: outputs 1, 2 (statistics) get no gradient
    xhat, _ = _bn_xhat(input, running_mean, running_var, result1, result2, training, eps, ops)
    return ops.sum(ops.mul(grad, xhat), _chan_axes(input.ndim))


def _chan_sum(grad: Any, ops: Any) -> Any:
    return ops.sum(grad, _chan_axes(grad.ndim))


def _bn_input_tangent(
    t: Tensor,
    input: Tensor,
    weight: Tensor,
    running_mean: Tensor,
    running_var: Tensor,
    training: bool,
    eps: float,
) -> Tensor:
    nd = input._data.ndim
    if training:
        xhat, rstd = graph_stats(input, _chan_axes(nd), eps)
        out = input_tangent(t, xhat, rstd, _chan_axes(nd))
    else:
        rstd = _bcast((running_var._data + eps) ** -0.5, nd).astype(input._data.dtype)
        out = t * const(rstd)
    if weight._data.size:
        out = out * weight.reshape((1, -1) + (1,) * (nd - 2))  # type: ignore[attr-defined]
    return out


def _bn_weight_tangent(
    t: Tensor, input: Tensor, running_mean: Tensor, running_var: Tensor, training: bool, eps: float
) -> Tensor:
    nd = input._data.ndim
    if training:
        xhat, _ = graph_stats(input, _chan_axes(nd), eps)
    else:
        rstd = _bcast((running_var._data + eps) ** -0.5, nd).astype(input._data.dtype)
        xhat = (input - const(_bcast(running_mean._data, nd))) * const(rstd)
    return xhat * t.reshape((1, -1) + (1,) * (nd - 2))  # type: ignore[attr-defined]


def _chan_tangent(t: Tensor, input_shape: Sequence[int]) -> Tensor:
    shape = (1, -1) + (1,) * (len(input_shape) - 2)
    return t.reshape(shape).expand(*input_shape)  # type: ignore[attr-defined]


def _reading(rule: Any, saves: tuple) -> Any:
    """`rule`, declared as also reading every value in `saves`.

    PyTorch computes all the gradients of a normalization with one formula, so its node saves
    every value the formula reads as soon as any input needs a gradient (a bias alone too):
    saved-tensor hooks see those pack calls. The extra parameters are accepted and ignored.
    """
    own = list(inspect.signature(rule).parameters)
    has_ops = own[-1] == "ops"  # ``ops`` stays last: array callers pass it there
    base = own[:-1] if has_ops else own
    names = base + [s for s in saves if s not in own] + (["ops"] if has_ops else [])
    n = len(base)

    def read_all(*args: Any) -> Any:
        return rule(*args[:n], args[-1]) if has_ops else rule(*args[:n])

    kind = inspect.Parameter.POSITIONAL_OR_KEYWORD
    read_all.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [inspect.Parameter(name, kind) for name in names])
    return read_all


_BN_SAVES = ("input", "running_mean", "running_var", "weight", "result1", "result2")
_LN_SAVES = ("bias", "input", "weight", "result1", "result2")
_GN_SAVES = ("input", "weight", "result1", "result2")

NATIVE_BATCH_NORM = defop(
    "native_batch_norm",
    impl=_bn_impl,
    inputs=("input", "weight", "bias", "running_mean", "running_var"),
    params=("training", "momentum", "eps"),
    num_outputs=3,
    nondifferentiable_outputs=(1, 2),
    saves=_BN_SAVES,
    # NOTE [Double-backward reads]: native_batch_norm_backward(grad_out, input, weight, ...)
    double_reads=dict.fromkeys(("input", "weight", "bias"), ("input", "weight")),
    vjp={
        "input": _reading(_bn_input_grad, _BN_SAVES),
        "weight": _reading(_bn_weight_grad, _BN_SAVES),
        "bias": _reading(lambda grads, ops: _chan_sum(grads[0], ops), _BN_SAVES),
    },
    nondifferentiable={
        "running_mean": "running statistics are buffers, not inputs of the function",
        "running_var": "running statistics",
    },
    jvp={
        "input": _bn_input_tangent,
        "weight": _bn_weight_tangent,
        "bias": lambda t, input_shape: _chan_tangent(t, input_shape),
    },
)


# ---------------------------------------------------------------- layer norm
def _last_axes(ndim: int, normalized_shape: Sequence[int]) -> Axes:
    return tuple(range(ndim - len(normalized_shape), ndim))


def _row_sums(a: Any, axes: Axes) -> Any:
    """``a.sum(axes, keepdims=True)``; one normalized (last) dimension sums through BLAS
    (NOTE [Row sums through BLAS]: 3.6 us against 23 for a transformer's 768 rows of 128)."""
    if len(axes) == 1:
        return row_sum(a, axes[0])
    return a.sum(axis=axes, keepdims=True)


def _row_means(a: Any, axes: Axes) -> Any:
    """``a.mean(axes, keepdims=True)``; as `_row_sums` for float32/64 (``mean`` of a half
    type accumulates in float32, which a half-precision sum would not)."""
    if len(axes) == 1 and a.shape[axes[0]] and a.dtype in (np.float32, np.float64):
        return row_sum(a, axes[0]) / a.shape[axes[0]]
    return a.mean(axis=axes, keepdims=True)


@quiet  # inf/nan inputs: PyTorch computes nan silently (NOTE [Quiet impls])
def _ln_impl(
    input: Any, weight: Any, bias: Any, normalized_shape: Sequence[int], eps: float
) -> tuple[Any, Any, Any]:
    xp = namespace_of(input)
    axes = _last_axes(input.ndim, normalized_shape)
    mean = _row_means(input, axes)
    centered = input - mean
    rstd = 1.0 / xp.sqrt(_row_means(centered * centered, axes) + eps)
    rstd = rstd.astype(input.dtype, copy=False)
    out = _affine(centered * rstd, weight, bias, tuple(normalized_shape))
    return out, mean, rstd


@quiet  # inf/nan inputs: PyTorch computes nan silently (NOTE [Quiet impls])
def _ln_xhat(
    input: Any, result1: Any, result2: Any, normalized_shape: Sequence[int], eps: float,
    ops: Any,
) -> tuple[Any, Any]:
    if ops.graph:  # NOTE [Normalization rules]: recomputed, differentiable in the input
        return graph_stats(input, _last_axes(input.ndim, normalized_shape), eps)
    if input.dtype == np.float32 and _short_rows(input, normalized_shape):
        # PyTorch's CPU kernel: x̂ = fma(rstd, x, -rstd * mean), the product kept exact (float64
        # holds a float32 product exactly); over one element x̂ is then rounding noise, not 0
        shift = (-(result2 * result1)).astype(np.float64)
        return (result2.astype(np.float64) * input + shift).astype(np.float32), result2
    return (input - result1) * result2, result2


def _ln_input_grad(
    grads: tuple,
    input: Any,
    weight: Any,
    bias: Any,
    result1: Any,
    result2: Any,
    normalized_shape: Sequence[int],
    eps: float,
    ops: Any,
) -> Any:
    # `bias` is read like PyTorch's formula reads it, so it is saved (PyTorch's pack order).
    g = grads[0]  # multi-output op: outputs 1, 2 (statistics) get no gradient
    if ops.graph:  # the same formula, differentiable in the input (NOTE [Normalization rules])
        return _ln_input_grad_graph(g, input, weight, _last_axes(input.ndim, normalized_shape),
                                    eps, result1, result2)
    return _ln_input_grad_aten(g, input, weight, result1, result2,
                               _last_axes(input.ndim, normalized_shape))


# Rows up to this length get PyTorch's fused multiply-adds emulated (in float64, which costs
# about twice the float32 arithmetic): there the gradient is mostly cancellation noise, which
# they decide. Longer rows are summed in another order than PyTorch's vectorised loops anyway.
_FMA_ROW = 8


def _short_rows(x: Any, normalized_shape: Sequence[int]) -> bool:
    n = 1
    for d in normalized_shape:
        n *= d
    return n <= _FMA_ROW


def _fma(a: Any, b: Any, c: Any, exact: bool = True) -> Any:
    """``a*b + c`` with one rounding for float32 (as the compiled kernel's fused multiply-add:
    a float64 product of float32 values is exact); plain arithmetic for other dtypes."""
    if exact and a.dtype == np.float32:
        return (a.astype(np.float64) * b + c).astype(np.float32)
    return a * b + c


@quiet  # inf/nan inputs: PyTorch computes nan silently (NOTE [Quiet impls])
def _ln_input_grad_aten(dy: Any, x: Any, weight: Any, mean: Any, rstd: Any, axes: Axes) -> Any:
    """PyTorch's CPU formula, in its order of operations: ``a*dy*w + b*x + c`` per row.

    With ``a = rstd``, ``b = (db*mean - ds) * a^3 / N`` and ``c = -b*mean - db*a/N`` (``ds``,
    ``db``: the row sums of ``dy*x*w`` and ``dy*w``), the compiled kernel fusing
    ``db*mean - ds``, ``-b*mean - db*a/N`` and ``b*x + a*dy*w`` into multiply-adds. Its
    rounding differs from the projection form's: over one element PyTorch's gradient is
    rounding noise of about ``a * ulp(dy)`` (``a`` is ``1/sqrt(eps)`` there), and over two
    nearly equal elements the cancellation amplifies it the same way; bit-exact for short rows.
    """
    n = 1
    for ax in axes:
        n *= x.shape[ax]
    scale = 1.0 / n if n else float("inf")
    dyx = dy * x
    ds = _row_sums(dyx * weight if weight.size else dyx, axes)
    db = _row_sums(dy * weight if weight.size else dy, axes)
    b = _fma(db, mean, -ds) * rstd * rstd * rstd * scale
    c = _fma(-b, mean, -(db * rstd * scale))
    a_dy = rstd * dy * weight if weight.size else rstd * dy
    return (_fma(b, x, a_dy, n <= _FMA_ROW) + c).astype(x.dtype, copy=False)


def _ln_input_grad_graph(dy: Tensor, x: Tensor, weight: Tensor, axes: Axes,
                         eps: float, saved_mean: Tensor, saved_rstd: Tensor) -> Tensor:
    """`_ln_input_grad_aten`'s formula on tensors, statistics recomputed from `x` (so double
    backward sees their dependence on it); without the fused multiply-adds.

    Their values are the saved ones, as PyTorch's backward reads them: they differ from the
    recomputed ones when `x` was written in place since (saved-tensor hooks skip the version
    check)."""
    n = 1
    for ax in axes:
        n *= x.shape[ax]
    scale = 1.0 / n if n else float("inf")
    mean = x.mean(axes, True)  # type: ignore[attr-defined]
    centered = x - mean
    rstd = ((centered * centered).mean(axes, True) + eps).rsqrt()  # type: ignore[attr-defined]
    mean = mean + (saved_mean.reshape(mean.shape) - mean).detach()  # type: ignore[attr-defined]
    rstd = rstd + (saved_rstd.reshape(rstd.shape) - rstd).detach()  # type: ignore[attr-defined]
    gy = dy * weight if weight._data.size else dy
    dyx = dy * x
    ds = (dyx * weight if weight._data.size else dyx).sum(axes, True)  # type: ignore[attr-defined]
    db = gy.sum(axes, True)  # type: ignore[attr-defined]
    b = (db * mean - ds) * rstd * rstd * rstd * scale
    c = -b * mean - db * rstd * scale
    a_dy = rstd * dy * weight if weight._data.size else rstd * dy
    return a_dy + b * x + c


def _lead_sum(grad: Any, other: Any, normalized_shape: Sequence[int], ops: Any) -> Any:
    """``sum(grad * other)`` over the leading (non-normalized) dims."""
    lead = tuple(range(grad.ndim - len(normalized_shape)))
    prod = grad if other is None else ops.mul(grad, other)
    if not lead and ops.graph:  # a 1-D input: nothing to sum (a tensor's ``sum(dim=())``
        return ops.mul(prod, 1.0)  # sums every dim); a fresh value, as the array path's
    return ops.sum(prod, lead)


def _ln_input_tangent(
    t: Tensor, input: Tensor, weight: Tensor, normalized_shape: Sequence[int], eps: float
) -> Tensor:
    axes = _last_axes(input._data.ndim, normalized_shape)
    xhat, rstd = graph_stats(input, axes, eps)
    out = input_tangent(t, xhat, rstd, axes)
    return out * weight if weight._data.size else out


NATIVE_LAYER_NORM = defop(
    "native_layer_norm",
    impl=_ln_impl,
    inputs=("input", "weight", "bias"),
    params=("normalized_shape", "eps"),
    num_outputs=3,
    nondifferentiable_outputs=(1, 2),
    saves=_LN_SAVES,
    # NOTE [Double-backward reads]: native_layer_norm_backward reads input, weight and bias
    double_reads=dict.fromkeys(("input", "weight", "bias"), ("input", "weight", "bias")),
    vjp={
        "input": _ln_input_grad,
        "weight": _reading(
            lambda grads, input, result1, result2, normalized_shape, eps, ops: _lead_sum(
                grads[0], _ln_xhat(input, result1, result2, normalized_shape, eps, ops)[0],
                normalized_shape, ops,
            ), _LN_SAVES),
        "bias": _reading(lambda grads, normalized_shape, ops: _lead_sum(
            grads[0], None, normalized_shape, ops), _LN_SAVES),
    },
    jvp={
        "input": _ln_input_tangent,
        "weight": lambda t, input, normalized_shape, eps: (
            graph_stats(input, _last_axes(input._data.ndim, normalized_shape), eps)[0] * t
        ),
        "bias": lambda t, input_shape: t.expand(*input_shape),
    },
)


# ---------------------------------------------------------------- group norm
def _grouped(input: Any, N: int, group: int) -> tuple[int, int, int]:
    """``[N, G, C/G*HxW]``, spelled out: ``-1`` cannot be inferred for an empty batch."""
    size = 1
    for n in input.shape[1:]:
        size *= n
    return (N, group, size // group)


@quiet  # inf/nan inputs: PyTorch computes nan silently (NOTE [Quiet impls])
def _gn_impl(
    input: Any, weight: Any, bias: Any, N: int, C: int, HxW: int, group: int, eps: float
) -> tuple[Any, Any, Any]:
    xp = namespace_of(input)
    x = input.reshape(_grouped(input, N, group))
    with warnings.catch_warnings():
        if not x.shape[2]:  # NumPy warns about the mean of nothing; PyTorch gives nan quietly
            warnings.simplefilter("ignore", RuntimeWarning)
        mean = x.mean(axis=2, keepdims=True)
        if not x.shape[2]:
            mean = xp.zeros_like(mean)  # PyTorch's kernel: an empty group's mean is 0, rstd nan
        centered = x - mean
        var = (centered * centered).mean(axis=2, keepdims=True)
        # ATen adds the double eps to the variance: 1/sqrt in double, rounded once
        rstd = 1.0 / xp.sqrt(var.astype(xp.float64) + eps)
    rstd = rstd.astype(input.dtype, copy=False)
    if not (weight.size or bias.size):
        out = (centered * rstd).reshape(input.shape)
    else:  # ATen: fma(x, scale, fma(-scale, mean, beta)) per channel, scale = rstd*gamma
        d = input.shape[1] // group if group else 0
        x4 = x.reshape(N, group, d, x.shape[2] // d if d else 0)
        scale = rstd[..., None] * (weight.reshape(1, group, d, 1) if weight.size else 1)
        beta = bias.reshape(1, group, d, 1) if bias.size else xp.zeros((), input.dtype)
        shift = _fma(-scale, mean[..., None], beta)
        out = _fma(x4, scale, shift).astype(input.dtype, copy=False).reshape(input.shape)
    if not _channels_last(input):  # empty_like(X, suggest_memory_format()), as batch norm
        out = xp.ascontiguousarray(out)
    return out, mean.reshape(N, group), rstd.reshape(N, group)


@quiet  # inf/nan inputs: PyTorch computes nan silently (NOTE [Quiet impls])
def _gn_xhat(input: Any, result1: Any, result2: Any, N: int, group: int, eps: float,
             ops: Any) -> tuple[Any, Any]:
    """``(x̂, r)`` in the grouped ``[N, G, -1]`` layout."""
    if ops.graph:  # NOTE [Normalization rules]: recomputed, differentiable in the input
        return graph_stats(input.reshape(_grouped(input, N, group)), (2,), eps)  # type: ignore[attr-defined]
    mean = result1.reshape(N, group, 1)
    rstd = result2.reshape(N, group, 1)
    return (input.reshape(_grouped(input, N, group)) - mean) * rstd, rstd


def _gn_input_grad(
    grads: tuple, input: Any, weight: Any, result1: Any, result2: Any, N: int,
    group: int, eps: float, ops: Any,
) -> Any:
    g = grads[0]
    stats = _gn_stats_grad(grads, input, result1, result2, N, group, eps, ops)
    if g is None:
        return stats
    if not ops.graph:
        out = _gn_input_grad_aten(g, input, weight, result1, result2, N, group)
    else:
        xhat, rstd = _gn_xhat(input, result1, result2, N, group, eps, ops)
        if ops.data(weight).size:
            g = ops.mul(g, ops.reshape(weight, (1, -1) + (1,) * (input.ndim - 2)))
        out = input_grad(ops.reshape(g, _grouped(input, N, group)), xhat, rstd, (2,))
        out = ops.reshape(out, input.shape)
    return out if stats is None else ops.add(out, stats)


def _gn_stats_grad(grads: tuple, input: Any, result1: Any, result2: Any, N: int, group: int,
                   eps: float, ops: Any) -> Any:
    """The input gradient through the mean and rstd outputs (differentiable in PyTorch):
    ``d mean/dx = 1/n``, ``d rstd/dx = -rstd^2 * x̂ / n`` per group of n elements. PyTorch's
    formula adds it only when both statistics got a gradient."""
    gm, gr = grads[1], grads[2]
    shape = _grouped(input, N, group)
    if gm is None or gr is None or not shape[2]:
        return None
    xhat, rstd = _gn_xhat(input, result1, result2, N, group, eps, ops)
    out = ops.mul(ops.reshape(gr, (N, group, 1)), ops.mul(ops.mul(rstd, rstd), xhat))
    out = ops.sub(ops.expand(ops.reshape(gm, (N, group, 1)), shape), out)
    return ops.reshape(ops.div(out, ops.const(np.asarray(shape[2], ops.data(xhat).dtype))),
                       input.shape)


@quiet  # inf/nan inputs: PyTorch computes nan silently (NOTE [Quiet impls])
def _gn_input_grad_aten(dy: Any, x: Any, weight: Any, mean: Any, rstd: Any, N: int,
                        group: int) -> Any:
    """PyTorch's GroupNormInputBackward in its order of operations (`_ln_input_grad_aten`'s
    formula per group): ``dx = fma(c1, dy, c2*x) + c3`` with ``c1 = rstd*gamma``,
    ``c2 = fma(db, mean, -ds) * rstd^3 / (D*HxW)`` and ``c3 = -c2*mean - db*rstd/(D*HxW)``;
    over groups of one or two elements the gradient is rounding noise these decide."""
    shape = _grouped(x, N, group)
    d = x.shape[1] // group if x.ndim > 1 and group else 1
    per_channel = shape[:2] + (d, shape[2] // d if d else 0)
    xs, gs = x.reshape(per_channel), dy.reshape(per_channel)
    gamma = weight.reshape(1, group, d) if weight.size else None
    ds, db = (gs * xs).sum(axis=3), gs.sum(axis=3)  # per (n, c)
    if gamma is not None:
        ds, db = ds * gamma, db * gamma
    ds, db = ds.sum(axis=2, keepdims=True), db.sum(axis=2, keepdims=True)  # per (n, g)
    m = mean.reshape(shape[:2] + (1,))
    r = rstd.reshape(shape[:2] + (1,))
    s = x.dtype.type(1.0 / shape[2]) if shape[2] else x.dtype.type(float("inf"))
    c2 = _fma(db, m, -ds) * r * r * r * s
    c3 = -c2 * m - db * r * s
    c1 = r if gamma is None else r * gamma
    out = _fma(c1[..., None], gs, c2[..., None] * xs) + c3[..., None]
    return out.astype(x.dtype, copy=False).reshape(x.shape)


def _gn_weight_grad(
    grads: tuple, input: Any, result1: Any, result2: Any, N: int, group: int, eps: float,
    ops: Any,
) -> Any:
    grad = grads[0]  # the statistics do not depend on the weight
    if grad is None:
        return None
    xhat, _ = _gn_xhat(input, result1, result2, N, group, eps, ops)
    return ops.sum(ops.mul(grad, ops.reshape(xhat, input.shape)), _chan_axes(input.ndim))


def _gn_input_tangent(
    t: Tensor, input: Tensor, weight: Tensor, N: int, group: int, eps: float
) -> Tensor:
    xhat, rstd = graph_stats(input.reshape(_grouped(input, N, group)), (2,), eps)  # type: ignore
    out = input_tangent(t.reshape(_grouped(input, N, group)), xhat, rstd, (2,))  # type: ignore
    out = out.reshape(input.shape)
    if weight._data.size:
        out = out * weight.reshape((1, -1) + (1,) * (input._data.ndim - 2))  # type: ignore
    return out


def _gn_weight_tangent(t: Tensor, input: Tensor, N: int, group: int, eps: float) -> Tensor:
    xhat, _ = graph_stats(input.reshape(_grouped(input, N, group)), (2,), eps)  # type: ignore
    nd = input._data.ndim
    return xhat.reshape(input.shape) * t.reshape((1, -1) + (1,) * (nd - 2))  # type: ignore


NATIVE_GROUP_NORM = defop(
    "native_group_norm",
    impl=_gn_impl,
    inputs=("input", "weight", "bias"),
    params=("N", "C", "HxW", "group", "eps"),
    # mean and rstd are differentiable outputs in PyTorch (unlike batch and layer norm's): a
    # node pre-hook sees three gradients, and the saved statistics require grad
    num_outputs=3,
    saves=_GN_SAVES,
    # NOTE [Double-backward reads]: native_group_norm_backward reads input and weight; its bias
    # gradient is not differentiable in PyTorch (never tied)
    double_reads=dict.fromkeys(("input", "weight"), ("input", "weight")),
    vjp={
        "input": _reading(_gn_input_grad, _GN_SAVES),
        "weight": _reading(_gn_weight_grad, _GN_SAVES),
        "bias": _reading(lambda grads, ops: None if grads[0] is None
                         else _chan_sum(grads[0], ops), _GN_SAVES),
    },
    jvp={
        "input": _gn_input_tangent,
        "weight": _gn_weight_tangent,
        "bias": lambda t, input_shape: _chan_tangent(t, input_shape),
    },
)

__all__ = [
    "NATIVE_BATCH_NORM",
    "NATIVE_LAYER_NORM",
    "NATIVE_GROUP_NORM",
    "input_grad",
    "input_tangent",
    "graph_stats",
]
