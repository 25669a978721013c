"""Array kernels of 2-d pooling (max, average, adaptive average) on NumPy or CuPy arrays.

Layer 3 (backend seam only; no Tensor). Inputs are ``[..., H, W]`` (any leading dims: batch
and channels, or channels only). Windows are strided views (NOTE [im2col view] in
`_conv_kernels`); backward passes loop over kernel taps at most, never over pixels.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from hookgrad._backend import NUMPY, namespace_of
from hookgrad._ops._conv_kernels import Pair, pad2d


def pool_out_size(size: int, k: int, s: int, p: int, d: int, ceil_mode: bool) -> int:
    """PyTorch's ``pooling_output_shape``: the last window must start inside the input or the
    left padding."""
    out = (size + 2 * p - d * (k - 1) - 1 + (s - 1 if ceil_mode else 0)) // s + 1
    if ceil_mode and (out - 1) * s >= size + p:
        out -= 1
    return out


def _padded(x: Any, k: Pair, s: Pair, p: Pair, d: Pair, out_hw: Pair, value: float) -> Any:
    """`x` padded by `p` before and by what the last (ceil-mode) window needs after."""
    h, w = x.shape[-2:]
    after_h = max(0, (out_hw[0] - 1) * s[0] + d[0] * (k[0] - 1) + 1 - h - p[0])
    after_w = max(0, (out_hw[1] - 1) * s[1] + d[1] * (k[1] - 1) + 1 - w - p[1])
    return pad2d(x, (p[0], after_h), (p[1], after_w), value)


def out_hw(shape: Sequence[int], k: Pair, s: Pair, p: Pair, d: Pair, ceil_mode: bool) -> Pair:
    return (
        pool_out_size(shape[-2], k[0], s[0], p[0], d[0], ceil_mode),
        pool_out_size(shape[-1], k[1], s[1], p[1], d[1], ceil_mode),
    )


# ---------------------------------------------------------------- max pooling
def max_pool2d(x: Any, k: Pair, s: Pair, p: Pair, d: Pair, ceil_mode: bool) -> tuple[Any, Any]:
    """``(values, flat input indices)``; ties pick the first maximum of a window (as PyTorch).

    A loop over the kernel taps, each a strided view of the padded input: a tap replaces the
    running maximum where it is strictly larger or nan (PyTorch's ``val > max || isnan(val)``),
    so the first maximum in row-major window order wins.
    """
    xp = namespace_of(x)
    oh, ow = out_hw(x.shape, k, s, p, d, ceil_mode)
    width = x.shape[-1]
    padded = _padded(x, k, s, p, d, (oh, ow), -float("inf"))
    eh, ew = (oh - 1) * s[0] + 1, (ow - 1) * s[1] + 1
    # The winning tap's number per output, in one byte (an int64 offset per tap moved eight
    # times the memory): the offsets are looked up once at the end
    taps = [(i * d[0], j * d[1]) for i in range(k[0]) for j in range(k[1])]
    small = len(taps) <= 127
    best = win = None
    for t, (r0, c0) in enumerate(taps):
        # a contiguous copy per tap: ufuncs on the strided view run an order slower
        view = xp.ascontiguousarray(padded[..., r0 : r0 + eh : s[0], c0 : c0 + ew : s[1]])
        if best is None:
            best, win = view, xp.zeros(view.shape, dtype=np.int8 if small else np.int64)
            continue
        wins = view > best
        wins |= view != view
        # arithmetic selects: NumPy's where/copyto(where=) branch per element and run ~100x
        # slower on random masks; maximum propagates nan like PyTorch. Taps come in increasing
        # order, so the largest winning number is the last tap that won.
        best = xp.maximum(best, view)
        xp.maximum(win, xp.multiply(wins, win.dtype.type(t), dtype=win.dtype), out=win)
    if k[0] * k[1] == 1 and xp.may_share_memory(best, x):
        best = best.copy()  # one tap of an unpadded input: a fresh result, never a view of x
    rows = xp.arange(oh).reshape(oh, 1) * s[0] - p[0]
    cols = xp.arange(ow).reshape(1, ow) * s[1] - p[1]
    off = xp.asarray([r0 * width + c0 for r0, c0 in taps], dtype=np.int64)[win]
    off += rows * width + cols
    return best, off


def max_pool2d_backward(g: Any, indices: Any, in_shape: Sequence[int], disjoint: bool) -> Any:
    """Scatter `g` to the input positions `indices` (summing where windows overlap)."""
    xp = namespace_of(g)
    plane = in_shape[-2] * in_shape[-1]
    batch = 1
    for n in in_shape[:-2]:
        batch *= n
    offsets = (xp.arange(batch) * plane).reshape(batch, 1)
    flat = (indices.reshape(batch, -1) + offsets).reshape(-1)
    if disjoint:  # every input position is some window's argmax at most once: a plain write
        out = xp.zeros(batch * plane, dtype=g.dtype)
        out[flat] = g.reshape(-1)
    else:
        out = xp.bincount(flat, weights=g.reshape(-1), minlength=batch * plane).astype(g.dtype)
    return out.reshape(tuple(in_shape))


def windows_disjoint(k: Pair, s: Pair, d: Pair) -> bool:
    return all(st >= dl * (kk - 1) + 1 for kk, st, dl in zip(k, s, d, strict=True))


# ---------------------------------------------------------------- average pooling
def _pool_sizes(n_out: int, size: int, k: int, s: int, p: int, include_pad: bool, xp: Any) -> Any:
    start = xp.arange(n_out) * s - p
    end = xp.minimum(start + k, size + p)
    if include_pad:
        return end - start
    return xp.minimum(end, size) - xp.maximum(start, 0)


def avg_divisor(
    shape: Sequence[int],
    hw: Pair,
    k: Pair,
    s: Pair,
    p: Pair,
    count_include_pad: bool,
    divisor_override: int | None,
    xp: Any,
) -> Any:
    """PyTorch's per-window divisor, ``[OH, OW]`` (or a scalar override)."""
    if divisor_override:
        return divisor_override
    rows = _pool_sizes(hw[0], shape[-2], k[0], s[0], p[0], count_include_pad, xp)
    cols = _pool_sizes(hw[1], shape[-1], k[1], s[1], p[1], count_include_pad, xp)
    return rows.reshape(-1, 1) * cols.reshape(1, -1)


@NUMPY.quiet  # inf/nan inputs: no NumPy RuntimeWarning (NOTE [Quiet impls])
def avg_pool2d(
    x: Any,
    k: Pair,
    s: Pair,
    p: Pair,
    ceil_mode: bool,
    count_include_pad: bool,
    divisor_override: int | None,
) -> Any:
    """Window sums by a loop over kernel taps (a reduction over the strided window view runs
    an order slower), divided by PyTorch's divisor."""
    xp = namespace_of(x)
    hw = out_hw(x.shape, k, s, p, (1, 1), ceil_mode)
    padded = _padded(x, k, s, p, (1, 1), hw, 0.0)
    eh, ew = (hw[0] - 1) * s[0] + 1, (hw[1] - 1) * s[1] + 1
    sums = None
    for i in range(k[0]):
        for j in range(k[1]):
            tap = padded[..., i : i + eh : s[0], j : j + ew : s[1]]
            if sums is None:  # a copy: the sum accumulates in place, never into the input
                sums = tap.copy()
            else:
                xp.add(sums, tap, out=sums)
    div = avg_divisor(x.shape, hw, k, s, p, count_include_pad, divisor_override, xp)
    return (sums / div).astype(x.dtype, copy=False)


@NUMPY.quiet  # inf/nan inputs: no NumPy RuntimeWarning (NOTE [Quiet impls])
def avg_pool2d_backward(
    g: Any,
    in_shape: Sequence[int],
    k: Pair,
    s: Pair,
    p: Pair,
    count_include_pad: bool,
    divisor_override: int | None,
) -> Any:
    """Each window's share of `g` added back over the window: a loop over kernel taps."""
    xp = namespace_of(g)
    oh, ow = g.shape[-2:]
    h, w = in_shape[-2:]
    div = avg_divisor(in_shape, (oh, ow), k, s, p, count_include_pad, divisor_override, xp)
    share = (g / div).astype(g.dtype, copy=False)
    hp = max(h + 2 * p[0], (oh - 1) * s[0] + k[0])
    wp = max(w + 2 * p[1], (ow - 1) * s[1] + k[1])
    out = xp.zeros((*g.shape[:-2], hp, wp), dtype=g.dtype)
    eh, ew = (oh - 1) * s[0] + 1, (ow - 1) * s[1] + 1
    for i in range(k[0]):
        for j in range(k[1]):
            out[..., i : i + eh : s[0], j : j + ew : s[1]] += share
    # the padding cropped: a fresh row-major array (PyTorch's grad_input), not a view
    return xp.ascontiguousarray(out[..., p[0] : p[0] + h, p[1] : p[1] + w])


# ---------------------------------------------------------------- adaptive average pooling
def adaptive_matrix(size: int, n_out: int, dtype: Any, xp: Any) -> Any:
    """``[n_out, size]`` averaging matrix; row i averages inputs ``floor(i*size/n_out)`` up to
    ``ceil((i+1)*size/n_out)`` (exclusive)."""
    i = xp.arange(n_out)
    start = (i * size) // n_out
    end = ((i + 1) * size + n_out - 1) // n_out
    cols = xp.arange(size).reshape(1, size)
    mask = (cols >= start.reshape(-1, 1)) & (cols < end.reshape(-1, 1))
    return (mask / (end - start).reshape(-1, 1)).astype(dtype)


def adaptive_mask(size: int, n_out: int) -> Any:
    """``[n_out, size]`` host bool matrix: row i holds the window of `adaptive_matrix`."""
    return adaptive_matrix(size, n_out, np.float64, np) != 0


@NUMPY.quiet  # inf/nan inputs: no NumPy RuntimeWarning (NOTE [Quiet impls])
def band_sum(mask: Any, x: Any, axis: int) -> Any:
    """``mask @ x`` along `axis` for a host bool matrix (``[n_out, n_in]``) whose ``True``s form
    one run of columns per row (the windows of adaptive pooling, or their transpose).

    Only the window's elements are summed: a dense product multiplies the zeros too, and
    ``0 * inf`` would spread nan to every output of the row, where PyTorch's window loops
    confine an inf/nan input to the windows holding it.
    """
    xp = namespace_of(x)
    lo, width = mask.argmax(axis=1), mask.sum(axis=1)
    x = xp.moveaxis(x, axis, -1)
    out = xp.zeros(x.shape[:-1] + (mask.shape[0],), dtype=x.dtype)
    for j in range(int(width.max(initial=0))):
        valid = xp.asarray(j < width)
        cols = xp.asarray(np.minimum(lo + j, mask.shape[1] - 1))
        out += xp.where(valid, x[..., cols], 0).astype(x.dtype, copy=False)
    return xp.moveaxis(out, -1, axis)


def window_counts(masks: Sequence[Any], dtype: Any, xp: Any) -> list:
    """Per spatial dim, the window sizes shaped to broadcast over ``[..., *out_sizes]``."""
    nd = len(masks)
    return [xp.asarray(m.sum(axis=1).reshape((-1,) + (1,) * (nd - 1 - i)), dtype=dtype)
            for i, m in enumerate(masks)]


def adaptive_avg(x: Any, sizes: Sequence[int]) -> Any:
    """Adaptive average pooling of the last ``len(sizes)`` dims: per window, the sum of its
    elements divided by each window size in turn (ATen's ``sum / kh / kw``)."""
    nd = len(sizes)
    masks = [adaptive_mask(x.shape[x.ndim - nd + i], n) for i, n in enumerate(sizes)]
    for i, m in enumerate(masks):
        x = band_sum(m, x, x.ndim - nd + i)
    for count in window_counts(masks, x.dtype, namespace_of(x)):
        x = x / count
    return namespace_of(x).ascontiguousarray(x)


def adaptive_avg_backward(g: Any, in_sizes: Sequence[int]) -> Any:
    """The gradient of `adaptive_avg`: each output's gradient divided by its window sizes
    (ATen's ``grad / kh / kw``), added to the window's elements."""
    nd = len(in_sizes)
    masks = [adaptive_mask(n, g.shape[g.ndim - nd + i]) for i, n in enumerate(in_sizes)]
    for count in window_counts(masks, g.dtype, namespace_of(g)):
        g = g / count
    for i, m in enumerate(masks):
        g = band_sum(m.T, g, g.ndim - nd + i)
    return namespace_of(g).ascontiguousarray(g)


@NUMPY.quiet  # inf/nan inputs: no NumPy RuntimeWarning (NOTE [Quiet impls])
def adaptive_avg_pool2d(x: Any, output_size: Pair) -> Any:
    return adaptive_avg(x, output_size)


@NUMPY.quiet  # inf/nan inputs: no NumPy RuntimeWarning (NOTE [Quiet impls])
def adaptive_avg_pool2d_backward(g: Any, in_shape: Sequence[int]) -> Any:
    return adaptive_avg_backward(g, tuple(in_shape)[-2:])


__all__ = [
    "pool_out_size",
    "out_hw",
    "max_pool2d",
    "max_pool2d_backward",
    "windows_disjoint",
    "avg_divisor",
    "avg_pool2d",
    "avg_pool2d_backward",
    "adaptive_matrix",
    "band_sum",
    "adaptive_avg",
    "adaptive_avg_backward",
    "adaptive_avg_pool2d",
    "adaptive_avg_pool2d_backward",
]
