"""Layer primitives PyTorch shows as their own nodes: ``pixel_shuffle``/``pixel_unshuffle``,
``channel_shuffle``, ``baddbmm``, ``adaptive_max_pool2d``/``3d`` (with their backward ops) and ``max_unpool2d``/``3d``.

Layer 3. Max-style ops keep flat per-plane (``H*W``) or per-volume (``D*H*W``) indices, as
PyTorch's do; their gradients scatter to, or gather from, those indices. The scatter is a
backward primitive (as in ATen) whose own derivative is the gather, so double backward works
with one body per rule.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from hookgrad._backend import NUMPY, has_data, namespace_of
from hookgrad._dispatch import bind
from hookgrad._ops import linalg as _LA
from hookgrad._ops import _pool_kernels as _PK
from hookgrad._ops._rules import ZERO_SELF
from hookgrad._ops.registry import defop
from hookgrad._tensor import Tensor

Ints = Sequence[int]


# ---------------------------------------------------------------- pixel shuffle
def _shuffle(self: Any, upscale_factor: int) -> Any:
    x, r = self, upscale_factor
    *lead, c, h, w = x.shape
    oc = c // (r * r)
    y = x.reshape(*lead, oc, r, r, h, w)
    n = len(lead)
    y = y.transpose(*range(n), n, n + 3, n + 1, n + 4, n + 2)
    # a copy even when the transpose is a no-op (r = 1): PyTorch's result is never a view
    return y.copy().reshape(*lead, oc, h * r, w * r)


def _unshuffle(self: Any, downscale_factor: int) -> Any:
    x, r = self, downscale_factor
    *lead, c, h, w = x.shape
    y = x.reshape(*lead, c, h // r, r, w // r, r)
    n = len(lead)
    y = y.transpose(*range(n), n, n + 2, n + 4, n + 1, n + 3)
    return y.copy().reshape(*lead, c * r * r, h // r, w // r)  # a fresh result (r = 1 too)


PIXEL_SHUFFLE = defop(
    "pixel_shuffle",
    impl=_shuffle,
    params=("upscale_factor",),
    vjp={"self": lambda grad, upscale_factor: bind(
        PIXEL_UNSHUFFLE, (grad,), {"downscale_factor": upscale_factor})},
    jvp="linear",
)
PIXEL_UNSHUFFLE = defop(
    "pixel_unshuffle",
    impl=_unshuffle,
    params=("downscale_factor",),
    vjp={"self": lambda grad, downscale_factor: bind(
        PIXEL_SHUFFLE, (grad,), {"upscale_factor": downscale_factor})},
    jvp="linear",
)


def _channel_shuffle(self: Any, groups: int) -> Any:
    n, c, *rest = self.shape
    y = self.reshape(n, groups, c // groups, *rest).swapaxes(1, 2)
    return y.copy().reshape(self.shape)  # a fresh row-major result, also for groups = 1


CHANNEL_SHUFFLE = defop(
    "channel_shuffle",
    impl=_channel_shuffle,
    params=("groups",),
    # the inverse permutation: shuffling C/G groups of G channels
    vjp={"self": lambda grad, groups: bind(
        CHANNEL_SHUFFLE, (grad,), {"groups": grad.shape[1] // groups})},
    jvp="linear",
)


# ---------------------------------------------------------------- baddbmm
@NUMPY.quiet  # inf/nan inputs: no NumPy RuntimeWarning (NOTE [Quiet impls])
def _baddbmm_impl(self: Any, batch1: Any, batch2: Any, beta: Any = 1, alpha: Any = 1) -> Any:
    xp = namespace_of(batch1)
    out = xp.matmul(batch1, batch2)
    if alpha != 1:
        out = out * alpha
    if beta == 0:  # PyTorch ignores `self` (even its nans) when beta is 0
        return xp.ascontiguousarray(out.astype(batch1.dtype, copy=False))
    return (out + (self if beta == 1 else self * beta)).astype(batch1.dtype, copy=False)


def _scaled(t: Tensor, factor: Any) -> Tensor:
    return t if factor == 1 else t * factor


BADDBMM = defop(
    "baddbmm",
    impl=_baddbmm_impl,
    inputs=("self", "batch1", "batch2"),
    params=("beta", "alpha"),
    saves=("batch1", "batch2"),
    vjp={
        "self": lambda grad, beta, self_shape: _scaled(grad, beta).sum_to_size(self_shape),
        "batch1": lambda grad, batch2, alpha: _scaled(grad.bmm(batch2.transpose(1, 2)), alpha),
        "batch2": lambda grad, batch1, alpha: _scaled(batch1.transpose(1, 2).bmm(grad), alpha),
    },
    jvp={
        "self": lambda t, beta, batch1_shape, batch2_shape: _scaled(t, beta).expand(
            batch1_shape[0], batch1_shape[1], batch2_shape[2]),
        "batch1": lambda t, batch2, alpha: _scaled(t.bmm(batch2), alpha),
        "batch2": lambda t, batch1, alpha: _scaled(batch1.bmm(t), alpha),
    },
)


# ---------------------------------------------------------------- scatter/gather by flat index
def _scatter(values: Any, indices: Any, shape: Ints, nd: int, accumulate: bool) -> Any:
    """Zeros of `shape` with `values` written (or summed) at the flat per-plane `indices`."""
    xp = namespace_of(values)
    plane = math.prod(shape[-nd:])
    batch = math.prod(shape[:-nd])
    flat = indices.reshape(batch, -1) + (xp.arange(batch) * plane).reshape(batch, 1)
    if accumulate:  # bincount: an order faster than add.at
        out = xp.bincount(flat.reshape(-1), weights=values.reshape(-1),
                          minlength=batch * plane).astype(values.dtype, copy=False)
    else:
        out = xp.zeros(batch * plane, dtype=values.dtype)
        out[flat.reshape(-1)] = values.reshape(-1)
    return out.reshape(tuple(shape))


def gather_planes(t: Tensor, indices: Tensor, nd: int) -> Tensor:
    """Values of `t` at the flat per-plane `indices` (the adjoint of `_scatter`)."""
    idx = indices.flatten(-nd)  # type: ignore[attr-defined]
    return t.flatten(-nd).gather(-1, idx).reshape(indices.shape)  # type: ignore[attr-defined]


# ---------------------------------------------------------------- adaptive max pooling
def _bounds(n_in: int, n_out: int) -> list[tuple[int, int]]:
    return [((i * n_in) // n_out, -((-(i + 1) * n_in) // n_out)) for i in range(n_out)]


def _adaptive_max(x: Any, output_size: Ints) -> tuple[Any, Any]:
    xp = namespace_of(x)
    nd = len(output_size)
    in_sp = x.shape[-nd:]
    lead = x.shape[:-nd]
    vals = xp.empty((*lead, *output_size), dtype=x.dtype)
    idx = xp.empty((*lead, *output_size), dtype=xp.int64)
    per_dim = [_bounds(n, o) for n, o in zip(in_sp, output_size)]
    for pos in itertools.product(*(range(o) for o in output_size)):
        win = [per_dim[d][p] for d, p in enumerate(pos)]
        block = x[(..., *(slice(a, b) for a, b in win))]
        flat = block.reshape(*lead, -1)
        local = xp.argmax(flat, axis=-1)  # first maximum; a nan counts as the maximum
        vals[(..., *pos)] = xp.take_along_axis(flat, local[..., None], -1)[..., 0]
        coords = xp.unravel_index(local, block.shape[-nd:]) if nd > 1 else (local,)
        g = 0
        for d in range(nd):
            g = g * in_sp[d] + coords[d] + win[d][0]
        idx[(..., *pos)] = g
    return vals, idx


def _adaptive_max_op(nd: int) -> tuple[Any, Any]:
    rank = f"{nd}D"

    def grad_rule(grads: tuple, self: Tensor, result1: Tensor) -> Tensor:
        return bind(backward, (grads[0], self, result1), {})

    forward = defop(
        f"adaptive_max_pool{nd}d",
        impl=_adaptive_max,
        params=("output_size",),
        num_outputs=2,
        nondifferentiable_outputs=(1,),
        saves=("self", "result1"),
        node_name=f"AdaptiveMaxPool{rank}Backward0",
        vjp={"self": grad_rule},
        jvp={"self": lambda t, result1: gather_planes(t, result1, nd)},
    )
    backward = defop(
        f"adaptive_max_pool{nd}d_backward",
        impl=lambda grad_output, self, indices: _scatter(
            grad_output, indices, self.shape, nd, True),
        inputs=("grad_output", "self", "indices"),
        saves=("indices",),
        node_name=f"AdaptiveMaxPool{rank}BackwardBackward0",
        vjp={"grad_output": lambda grad, indices: gather_planes(grad, indices, nd), **ZERO_SELF},
        nondifferentiable={"indices": "integer indices"},
        jvp="linear",
    )
    return forward, backward


ADAPTIVE_MAX_POOL2D, _ = _adaptive_max_op(2)
ADAPTIVE_MAX_POOL3D, _ = _adaptive_max_op(3)


# ---------------------------------------------------------------- max unpooling
def _unpool_impl(nd: int) -> Any:
    def impl(self: Any, indices: Any, output_size: Ints) -> Any:
        shape = (*self.shape[:-nd], *output_size)
        # checked here, on the raw array, so that it also holds under vmap
        volume = math.prod(output_size)
        if indices.size and has_data(indices) and (indices.min() < 0 or indices.max() >= volume):
            bad = int(indices.max() if indices.max() >= volume else indices.min())
            raise RuntimeError(f"Found an invalid max index: {bad} (output volumes are of size "
                               f"{'x'.join(map(str, output_size))})")
        return _scatter(self, indices, shape, nd, False)

    return impl


def _unpool_grad(nd: int) -> Any:
    return lambda grad, indices: gather_planes(grad, indices, nd)


MAX_UNPOOL = {
    nd: defop(
        f"max_unpool{nd}d",
        impl=_unpool_impl(nd),
        inputs=("self", "indices"),
        params=("output_size",),
        saves=("indices",),
        node_name=f"MaxUnpool{nd}DBackward0",
        vjp={"self": _unpool_grad(nd)},
        nondifferentiable={"indices": "integer indices"},
        jvp="linear",
    )
    for nd in (2, 3)
}

__all__ = [
    "PIXEL_SHUFFLE", "PIXEL_UNSHUFFLE", "CHANNEL_SHUFFLE", "BADDBMM", "ADAPTIVE_MAX_POOL2D", "ADAPTIVE_MAX_POOL3D",
    "MAX_UNPOOL", "gather_planes",
]


# ---------------------------------------------------------------- norm.ScalarOpt_dim
# C++ composites (``pairwise_distance``) call ``at::norm(x, p, dim, keepdim)``, whose node is
# NormBackward1; the formula is linalg_vector_norm's.
NORM = defop(
    "norm",
    impl=lambda self, p, dim, keepdim: _LA._norm_impl(self, p, dim, keepdim),
    params=("p", "dim", "keepdim"),
    saves=("self", "result"),
    node_name="NormBackward1",
    vjp={"self": lambda grad, self, result, p, dim, keepdim: _LA._norm_backward(
        grad, self, result, p, dim, keepdim)},
    jvp={"self": lambda t, self, result, p, dim, keepdim: _LA._norm_jvp(
        t, self, result, p, dim, keepdim)},
)


# ---------------------------------------------------------------- adaptive average pool 3-d
ADAPTIVE_AVG_POOL3D = defop(
    "_adaptive_avg_pool3d",
    impl=lambda self, output_size: _PK.adaptive_avg(self, tuple(output_size)),
    params=("output_size",),
    saves=("self",),
    node_name="AdaptiveAvgPool3DBackward0",
    vjp={"self": lambda grad, self: bind(
        ADAPTIVE_AVG_POOL3D_BACKWARD, (grad, self), {"self_size": tuple(self.shape)})},
    jvp="linear",
)
ADAPTIVE_AVG_POOL3D_BACKWARD = defop(
    "_adaptive_avg_pool3d_backward",
    impl=lambda grad_output, self, self_size: _PK.adaptive_avg_backward(
        grad_output, tuple(self_size)[-3:]).reshape(tuple(self_size)),
    inputs=("grad_output", "self"),
    params=("self_size",),
    node_name="AdaptiveAvgPool3DBackwardBackward0",
    vjp={"grad_output": lambda grad, grad_output_shape: bind(
        ADAPTIVE_AVG_POOL3D, (grad,), {"output_size": tuple(grad_output_shape[-3:])}),
        **ZERO_SELF},
    jvp="linear",
)
__all__ += ["NORM", "ADAPTIVE_AVG_POOL3D"]
