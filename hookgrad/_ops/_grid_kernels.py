"""Array kernels of ``grid_sampler_2d``/``grid_sampler_3d``: sampling plans as separable taps.

Layer 3 (arrays only). Every interpolation mode is written as a set of *taps*: for each output
point, an input location (flat per-plane index and an in-bounds flag), a weight, and the weight's
derivative with respect to each grid coordinate. Nearest has one tap, bilinear ``2**d`` and
bicubic 16; each tap is the product of one choice per spatial dimension, so the three modes share
the forward, the input gradient (a scatter of the same weights) and the grid gradient (the
weight derivatives against the sampled values). Coordinate handling follows ATen's
``GridSampler.h``: unnormalisation, border clipping and reflection, each with its gradient
multiplier (0 where clipped, -1 where reflected).
"""

from __future__ import annotations

import itertools
import math
from typing import Any

from hookgrad._backend import namespace_of

BILINEAR, NEAREST, BICUBIC = 0, 1, 2
ZEROS, BORDER, REFLECTION = 0, 1, 2
_A = -0.75  # the cubic convolution coefficient PyTorch uses


def _unnormalize(g: Any, size: int, align: bool) -> tuple[Any, float]:
    """Grid value in [-1, 1] -> pixel coordinate, and d(coordinate)/d(grid)."""
    if align:
        return (g + 1) / 2 * (size - 1), (size - 1) / 2
    return ((g + 1) * size - 1) / 2, size / 2


def _clip(xp: Any, x: Any, size: int) -> tuple[Any, Any]:
    """Clamp to [0, size - 1]; the gradient is 0 where clamped (ATen: at the limits too)."""
    inside = (x > 0) & (x < size - 1)
    return xp.clip(x, 0, size - 1), inside.astype(x.dtype)


def _reflect(xp: Any, x: Any, twice_low: int, twice_high: int) -> tuple[Any, Any]:
    """Reflect `x` into [low, high] by mirroring at the bounds; the gradient is +-1."""
    if twice_low == twice_high:
        return xp.zeros_like(x), xp.zeros_like(x)
    low = twice_low / 2
    span = (twice_high - twice_low) / 2
    x = x - low
    sign = xp.where(x < 0, -1.0, 1.0).astype(x.dtype)
    x = xp.abs(x)
    extra = xp.fmod(x, span)
    flips = xp.floor(x / span)
    even = (flips % 2) == 0
    return xp.where(even, extra + low, span - extra + low), xp.where(even, sign, -sign)


def _pad_coord(xp: Any, x: Any, size: int, padding: int, align: bool) -> tuple[Any, Any]:
    """ATen's ``compute_coordinates``: the coordinate under `padding`, and its gradient factor."""
    one = xp.ones_like(x)
    if padding == BORDER:
        return _clip(xp, x, size)
    if padding == REFLECTION:
        if align:
            x, m1 = _reflect(xp, x, 0, 2 * (size - 1))
        else:
            x, m1 = _reflect(xp, x, -1, 2 * size - 1)
        x, m2 = _clip(xp, x, size)
        return x, m1 * m2
    return x, one


def _cubic(xp: Any, t: Any) -> tuple[list, list]:
    """The four cubic-convolution weights for fraction `t` and their derivatives in `t`."""
    def c1(x: Any) -> Any:
        return ((_A + 2) * x - (_A + 3)) * x * x + 1

    def c2(x: Any) -> Any:
        return ((_A * x - 5 * _A) * x + 8 * _A) * x - 4 * _A

    def d1(x: Any) -> Any:
        return (3 * (_A + 2) * x - 2 * (_A + 3)) * x

    def d2(x: Any) -> Any:
        return (3 * _A * x - 10 * _A) * x + 8 * _A

    w = [c2(t + 1), c1(t), c1(1 - t), c2(2 - t)]
    dw = [d2(t + 1), d1(t), -d1(1 - t), -d2(2 - t)]
    return w, dw


def _choices(xp: Any, g: Any, size: int, mode: int, padding: int, align: bool) -> list:
    """Per-dimension options ``(index, weight, d weight / d grid)`` for grid values `g`."""
    x, scale = _unnormalize(g, size, align)
    if mode == BICUBIC:
        base = xp.floor(x)
        w, dw = _cubic(xp, x - base)
        out = []
        for i in range(4):
            idx, _ = _pad_coord(xp, base + (i - 1), size, padding, align)
            out.append((idx, w[i], dw[i] * scale))
        return out
    x, mult = _pad_coord(xp, x, size, padding, align)
    if mode == NEAREST:
        return [(xp.rint(x), xp.ones_like(x), xp.zeros_like(x))]
    x0 = xp.floor(x)
    d = mult * scale
    return [(x0, x0 + 1 - x, -d), (x0 + 1, x - x0, d)]


def plan(shape: tuple, grid: Any, mode: int, padding: int, align: bool) -> list:
    """Taps ``(flat index, weight * in-bounds, [d weight / d grid[..., k] for k])`` for an input of
    `shape` ``(N, C, *spatial)`` sampled at `grid` ``(N, *out, d)``; arrays are ``(N, P)``."""
    xp = namespace_of(grid)
    spatial = shape[2:]
    nd = len(spatial)
    n = grid.shape[0]
    g = grid.reshape(n, -1, nd)
    # grid[..., 0] indexes the last spatial dimension (x is width), as in PyTorch
    per_dim = [_choices(xp, g[..., nd - 1 - i], spatial[i], mode, padding, align)
               for i in range(nd)]
    strides = [math.prod(spatial[i + 1:]) for i in range(nd)]
    taps = []
    for combo in itertools.product(*per_dim):
        flat = 0
        valid = True
        weight = 1
        for i, (idx, w, _) in enumerate(combo):
            ok = (idx >= 0) & (idx <= spatial[i] - 1)
            valid = valid & ok
            flat = flat + xp.clip(xp.nan_to_num(idx), 0, spatial[i] - 1).astype(xp.int64) * strides[i]
            weight = weight * w
        mask = valid.astype(g.dtype)
        dgrid = []
        for k in range(nd):  # grid component k moves spatial dimension nd - 1 - k
            i = nd - 1 - k
            dw = combo[i][2]
            for j, (_, w, _) in enumerate(combo):
                if j != i:
                    dw = dw * w
            dgrid.append(dw * mask)
        taps.append((flat, xp.where(valid, weight, 0).astype(g.dtype), dgrid))
    return taps


def _gathered(inp: Any, flat: Any) -> Any:
    """``inp[n, c, flat[n, p]]`` for ``inp`` of shape ``(N, C, S)``: ``(N, C, P)``."""
    xp = namespace_of(inp)
    return xp.take_along_axis(inp, flat[:, None, :], axis=2)


def sample(inp: Any, grid: Any, mode: int, padding: int, align: bool) -> Any:
    """The forward: ``(N, C, *out)``."""
    n, c = inp.shape[:2]
    flat_in = inp.reshape(n, c, -1)
    out = 0
    for flat, w, _ in plan(inp.shape, grid, mode, padding, align):
        out = out + _gathered(flat_in, flat) * w[:, None, :]
    xp = namespace_of(inp)
    if not hasattr(out, "shape"):
        out = xp.zeros((n, c, 0), dtype=inp.dtype)
    return out.astype(inp.dtype, copy=False).reshape(n, c, *grid.shape[1:-1])


def input_grad(grad: Any, shape: tuple, grid: Any, mode: int, padding: int, align: bool) -> Any:
    """Scatter-add of `grad` with the forward weights: the gradient of the input."""
    xp = namespace_of(grad)
    n, c = shape[:2]
    plane = math.prod(shape[2:])
    g = grad.reshape(n, c, -1)
    base = (xp.arange(n)[:, None, None] * c + xp.arange(c)[None, :, None]) * plane
    index, values = [], []
    for flat, w, _ in plan(shape, grid, mode, padding, align):
        index.append((base + flat[:, None, :]).reshape(-1))
        values.append((g * w[:, None, :]).reshape(-1))
    if not index:
        return xp.zeros(shape, dtype=grad.dtype)
    out = xp.bincount(xp.concatenate(index), weights=xp.concatenate(values),
                      minlength=n * c * plane)
    return out.astype(grad.dtype, copy=False).reshape(shape)


def grid_grad(grad: Any, inp: Any, grid: Any, mode: int, padding: int, align: bool) -> Any:
    """Sum over channels of `grad` times the sampled values' derivative: ``grid``'s shape."""
    xp = namespace_of(grad)
    n, c = inp.shape[:2]
    nd = grid.shape[-1]
    flat_in = inp.reshape(n, c, -1)
    g = grad.reshape(n, c, -1)
    out = xp.zeros((n, g.shape[2], nd), dtype=grid.dtype)
    if mode == NEAREST:  # piecewise constant in the grid: PyTorch returns zeros
        return out.reshape(grid.shape)
    for flat, _, dgrid in plan(inp.shape, grid, mode, padding, align):
        gv = (_gathered(flat_in, flat) * g).sum(axis=1)
        for k in range(nd):
            out[..., k] += gv * dgrid[k]
    return out.reshape(grid.shape)
