"""3-d pooling primitives: ``max_pool3d_with_indices`` and ``avg_pool3d``, with backward ops.

Layer 3. PyTorch shows ``MaxPool3DWithIndicesBackward0`` and ``AvgPool3DBackward0``. Inputs are
``[N, C, D, H, W]`` or ``[C, D, H, W]``; max-pool indices are flat per volume (``D*H*W``), as
PyTorch's. Kernels loop over kernel taps only, each a strided slice of the padded input. The
backward ops are primitives (as in ATen), linear in the gradient: the max-pool one scatters
(its derivative gathers), the average one spreads (its derivative is ``avg_pool3d`` again).
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any

from hookgrad._backend import namespace_of
from hookgrad._dispatch import bind
from hookgrad._ops._convnd_kernels import pad_nd
from hookgrad._ops._pool_kernels import pool_out_size
from hookgrad._ops._rules import ZERO_SELF
from hookgrad._ops.layers import _scatter, gather_planes
from hookgrad._ops.registry import defop
from hookgrad._tensor import Tensor

Ints = Sequence[int]
_ND = 3


def out_sizes(shape: Ints, k: Ints, s: Ints, p: Ints, d: Ints, ceil_mode: bool) -> tuple:
    return tuple(pool_out_size(shape[-_ND + i], k[i], s[i], p[i], d[i], ceil_mode)
                 for i in range(_ND))


def _padded(x: Any, k: Ints, s: Ints, p: Ints, d: Ints, outs: Ints, value: float) -> Any:
    """`x` padded by `p` before and by what the last (ceil-mode) window needs after."""
    after = [max(0, (outs[i] - 1) * s[i] + d[i] * (k[i] - 1) + 1 - x.shape[-_ND + i] - p[i])
             for i in range(_ND)]
    return pad_nd(x, p, after, value)


def _tap(tap: Ints, d: Ints, s: Ints, outs: Ints) -> tuple:
    return (..., *(slice(t * dd, t * dd + (o - 1) * ss + 1, ss)
                   for t, dd, ss, o in zip(tap, d, s, outs)))


# ---------------------------------------------------------------- max pooling
def _max_impl(self: Any, kernel_size: Ints, stride: Ints, padding: Ints, dilation: Ints,
              ceil_mode: bool) -> tuple[Any, Any]:
    """First maximum in window order wins; nan wins (PyTorch's ``val > max || isnan(val)``)."""
    xp = namespace_of(self)
    k, s, p, d = kernel_size, stride, padding, dilation
    outs = out_sizes(self.shape, k, s, p, d, ceil_mode)
    padded = _padded(self, k, s, p, d, outs, -float("inf"))
    sizes = self.shape[-_ND:]
    best = off = None
    for tap in itertools.product(*(range(kk) for kk in k)):
        view = xp.ascontiguousarray(padded[_tap(tap, d, s, outs)])
        delta = (tap[0] * d[0] * sizes[1] + tap[1] * d[1]) * sizes[2] + tap[2] * d[2]
        if best is None:
            best, off = view, xp.full(view.shape, delta, dtype=xp.int64)
            continue
        wins = (view > best) | (view != view)
        best = xp.where(wins, view, best)
        off = xp.where(wins, delta, off)
    if xp.may_share_memory(best, self):
        best = best.copy()  # one tap of an unpadded input: a fresh result, never a view of it
    grids = xp.meshgrid(*(xp.arange(o) * s[i] - p[i] for i, o in enumerate(outs)), indexing="ij")
    off = off + (grids[0] * sizes[1] + grids[1]) * sizes[2] + grids[2]
    return best, off


def _max_grad(grads: tuple, self: Tensor, result1: Tensor) -> Tensor:
    return bind(MAX_POOL3D_BACKWARD, (grads[0], self, result1), {})


_POOL_PARAMS = ("kernel_size", "stride", "padding", "dilation", "ceil_mode")
MAX_POOL3D = defop(
    "max_pool3d_with_indices",
    impl=_max_impl,
    params=_POOL_PARAMS,
    num_outputs=2,
    nondifferentiable_outputs=(1,),
    saves=("self", "result1"),
    node_name="MaxPool3DWithIndicesBackward0",
    vjp={"self": _max_grad},
    jvp={"self": lambda t, result1: gather_planes(t, result1, _ND)},
)
MAX_POOL3D_BACKWARD = defop(
    "max_pool3d_with_indices_backward",
    impl=lambda grad_output, self, indices: _scatter(grad_output, indices, self.shape, _ND, True),
    inputs=("grad_output", "self", "indices"),
    saves=("indices",),
    node_name="MaxPool3DWithIndicesBackwardBackward0",
    vjp={"grad_output": lambda grad, indices: gather_planes(grad, indices, _ND), **ZERO_SELF},
    nondifferentiable={"indices": "integer indices"},
    jvp="linear",
)


# ---------------------------------------------------------------- average pooling
_AVG_PARAMS = ("kernel_size", "stride", "padding", "ceil_mode", "count_include_pad",
               "divisor_override")


def _divisor(xp: Any, sizes: Ints, outs: Ints, k: Ints, s: Ints, p: Ints, include: bool,
             override: int | None) -> Any:
    if override:
        return override
    per_dim = []
    for n, o, kk, ss, pp in zip(sizes, outs, k, s, p):
        start = xp.arange(o) * ss - pp
        end = xp.minimum(start + kk, n + pp)
        per_dim.append(end - start if include else xp.minimum(end, n) - xp.maximum(start, 0))
    return per_dim[0].reshape(-1, 1, 1) * per_dim[1].reshape(1, -1, 1) * per_dim[2].reshape(
        1, 1, -1)


def _avg_impl(self: Any, kernel_size: Ints, stride: Ints, padding: Ints, ceil_mode: bool,
              count_include_pad: bool, divisor_override: int | None) -> Any:
    xp = namespace_of(self)
    k, s, p, d = kernel_size, stride, padding, (1,) * _ND
    outs = out_sizes(self.shape, k, s, p, d, ceil_mode)
    padded = _padded(self, k, s, p, d, outs, 0.0)
    total = sum(padded[_tap(tap, d, s, outs)] for tap in itertools.product(*(range(v) for v in k)))
    div = _divisor(xp, self.shape[-_ND:], outs, k, s, p, count_include_pad, divisor_override)
    return xp.ascontiguousarray(total / div).astype(self.dtype, copy=False)


def _avg_backward_impl(grad_output: Any, self: Any, self_size: Ints, kernel_size: Ints, stride: Ints,
                       padding: Ints, ceil_mode: bool, count_include_pad: bool,
                       divisor_override: int | None) -> Any:
    xp = namespace_of(grad_output)
    k, s, p, d = kernel_size, stride, padding, (1,) * _ND
    outs = grad_output.shape[-_ND:]
    sizes = tuple(self_size)[-_ND:]
    g = grad_output / _divisor(xp, sizes, outs, k, s, p, count_include_pad, divisor_override)
    full = [max(sizes[i] + 2 * p[i], (outs[i] - 1) * s[i] + k[i]) for i in range(_ND)]
    res = xp.zeros((*grad_output.shape[:-_ND], *full), dtype=grad_output.dtype)
    for tap in itertools.product(*(range(v) for v in k)):
        res[_tap(tap, d, s, outs)] += g
    crop = (..., *(slice(pp, pp + n) for pp, n in zip(p, sizes)))
    return xp.ascontiguousarray(res[crop]).astype(grad_output.dtype, copy=False)


def _avg_grad(grad: Tensor, self: Tensor, **params: Any) -> Tensor:
    return bind(AVG_POOL3D_BACKWARD, (grad, self), {"self_size": tuple(self.shape), **params})


AVG_POOL3D = defop(
    "avg_pool3d",
    impl=_avg_impl,
    params=_AVG_PARAMS,
    saves=("self",),
    node_name="AvgPool3DBackward0",
    vjp={"self": lambda grad, self, kernel_size, stride, padding, ceil_mode,
         count_include_pad, divisor_override: _avg_grad(
             grad, self, kernel_size=kernel_size, stride=stride, padding=padding,
             ceil_mode=ceil_mode, count_include_pad=count_include_pad,
             divisor_override=divisor_override)},
    jvp="linear",
)
AVG_POOL3D_BACKWARD = defop(
    "avg_pool3d_backward",
    impl=_avg_backward_impl,
    inputs=("grad_output", "self"),
    params=("self_size", *_AVG_PARAMS),
    node_name="AvgPool3DBackwardBackward0",
    vjp={"grad_output": lambda grad, kernel_size, stride, padding, ceil_mode, count_include_pad,
         divisor_override: bind(AVG_POOL3D, (grad,), {
             "kernel_size": kernel_size, "stride": stride, "padding": padding,
             "ceil_mode": ceil_mode, "count_include_pad": count_include_pad,
             "divisor_override": divisor_override}), **ZERO_SELF},
    jvp="linear",
)

__all__ = ["MAX_POOL3D", "AVG_POOL3D", "out_sizes"]
