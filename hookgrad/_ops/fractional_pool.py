"""Fractional max pooling primitives: ``fractional_max_pool2d``/``fractional_max_pool3d``, with
their backward ops.

Layer 3. PyTorch shows ``FractionalMaxPool2DBackward0``/``FractionalMaxPool3DBackward0``. Window
starts are pseudo-random per plane: ATen's ``generate_intervals`` turns one sample ``u`` in
[0, 1) per plane and dimension into ``int((i + u) * alpha) - int(u * alpha)`` with
``alpha = (in - pool) / (out - 1)``, computed in the input's dtype (float32 rounding changes the
starts, so the arithmetic stays in that dtype), and the last window ends at the border. The
2-d op reads the samples as ``(w, h)``, the 3-d op as ``(t, h, w)``, as ATen does. Indices are
flat per plane; the backward scatters (its derivative gathers), like max pooling's.
"""

from __future__ import annotations

import itertools
import math
from typing import Any

from hookgrad._backend import namespace_of
from hookgrad._dispatch import bind
from hookgrad._ops._rules import ZERO_SELF
from hookgrad._ops.layers import _scatter, gather_planes
from hookgrad._ops.registry import defop

_SAMPLE_OF_DIM = {2: (1, 0), 3: (0, 1, 2)}  # which sample drives each spatial dimension


def _starts(u: Any, size: int, out: int, pool: int) -> Any:
    """Window starts ``(..., out)`` for samples `u` ``(...)``."""
    xp = namespace_of(u)
    starts = xp.empty((*u.shape, out), dtype=xp.int64)
    if out > 1:
        alpha = u.dtype.type(size - pool) / u.dtype.type(out - 1)
        i = xp.arange(out - 1).astype(u.dtype)
        first = (u[..., None] * alpha).astype(xp.int64)
        starts[..., :-1] = ((i + u[..., None]) * alpha).astype(xp.int64) - first
    if out > 0:
        starts[..., -1] = size - pool
    return starts


def _impl(self: Any, random_samples: Any, kernel_size: tuple, output_size: tuple) -> tuple:
    """Values and flat indices; first maximum in window order wins, a nan always wins."""
    xp = namespace_of(self)
    nd = len(kernel_size)
    batched = self.ndim == nd + 2
    x = self if batched else self[None]
    n, c = x.shape[:2]
    spatial = x.shape[2:]
    samples = random_samples[:n]
    starts = [_starts(samples[..., _SAMPLE_OF_DIM[nd][d]], spatial[d], output_size[d],
                      kernel_size[d]) for d in range(nd)]
    plane = x.reshape(n, c, -1)
    strides = [math.prod(spatial[d + 1:]) for d in range(nd)]

    def flat_at(offsets: tuple) -> Any:
        idx = 0
        for d in range(nd):  # broadcast dimension d's starts over the others
            shape = [n, c] + [1] * nd
            shape[2 + d] = output_size[d]
            idx = idx + (starts[d] + offsets[d]).reshape(shape) * strides[d]
        return xp.broadcast_to(idx, (n, c, *output_size)).reshape(n, c, -1)

    best_idx = flat_at((0,) * nd)
    best = xp.full(best_idx.shape, -xp.inf, dtype=x.dtype)
    for offsets in itertools.product(*(range(k) for k in kernel_size)):
        idx = flat_at(offsets)
        val = xp.take_along_axis(plane, idx, axis=2)
        take = (val > best) | xp.isnan(val)
        best = xp.where(take, val, best)
        best_idx = xp.where(take, idx, best_idx)
    shape = (n, c, *output_size) if batched else (c, *output_size)
    return best.reshape(shape), best_idx.reshape(shape)


def _define(nd: int) -> tuple:
    name = f"fractional_max_pool{nd}d"
    backward = defop(
        f"{name}_backward",
        impl=lambda grad_output, self, indices, kernel_size, output_size: _scatter(
            grad_output, indices, self.shape, nd, True),
        inputs=("grad_output", "self", "indices"),
        params=("kernel_size", "output_size"),
        saves=("indices",),
        node_name=f"FractionalMaxPool{nd}DBackwardBackward0",
        vjp={"grad_output": lambda grad, indices: gather_planes(grad, indices, nd), **ZERO_SELF},
        nondifferentiable={"indices": "integer indices"},
        jvp="linear",
    )
    forward = defop(
        name,
        impl=_impl,
        inputs=("self", "random_samples"),
        params=("kernel_size", "output_size"),
        num_outputs=2,
        nondifferentiable_outputs=(1,),
        saves=("self", "result1"),
        node_name=f"FractionalMaxPool{nd}DBackward0",
        vjp={"self": lambda grads, self, result1, kernel_size, output_size: bind(
            backward, (grads[0], self, result1),
            {"kernel_size": kernel_size, "output_size": output_size})},
        nondifferentiable={"random_samples": "samples only place the windows"},
        jvp={"self": lambda t, result1: gather_planes(t, result1, nd)},
    )
    return forward, backward


FRACTIONAL_MAX_POOL2D, FRACTIONAL_MAX_POOL2D_BACKWARD = _define(2)
FRACTIONAL_MAX_POOL3D, FRACTIONAL_MAX_POOL3D_BACKWARD = _define(3)
