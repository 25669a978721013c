"""Array kernels of 3-d (any-rank) convolution and pooling on NumPy or CuPy arrays.

Layer 3 (backend seam only; no Tensor). The same im2col-by-strided-view scheme as the 2-d
kernels in `_conv_kernels` (NOTE [im2col view] there), written for any number of spatial dims:
forward is one batched matmul over a read-only window view, adjoints loop over kernel taps only.
The 2-d kernels stay separate because they are tuned for the benchmarked hot path.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from hookgrad._backend import NUMPY, namespace_of
from hookgrad._ops._conv_kernels import out_size, transposed_size

Ints = Sequence[int]


def pad_nd(x: Any, before: Ints, after: Ints, value: float = 0.0) -> Any:
    """`x` with its last ``len(before)`` dims padded."""
    if not any(before) and not any(after):
        return x
    widths = [(0, 0)] * (x.ndim - len(before)) + list(zip(before, after))
    return namespace_of(x).pad(x, widths, mode="constant", constant_values=value)


def windows_nd(x: Any, kernel: Ints, stride: Ints, dilation: Ints, out: Ints) -> Any:
    """The ``[..., *out, *kernel]`` receptive-field view of a padded array (read-only)."""
    xp = namespace_of(x)
    nd = len(kernel)
    lead, sp_st = x.strides[:-nd], x.strides[-nd:]
    shape = (*x.shape[:-nd], *out, *kernel)
    strides = (*lead, *(st * s for st, s in zip(sp_st, stride)),
               *(st * d for st, d in zip(sp_st, dilation)))
    if xp is np:  # windows overlap, so writing through the view would be wrong
        return np.lib.stride_tricks.as_strided(x, shape=shape, strides=strides, writeable=False)
    return xp.lib.stride_tricks.as_strided(x, shape=shape, strides=strides)


def _tap_slices(tap: Ints, dilation: Ints, stride: Ints, out: Ints) -> tuple[slice, ...]:
    return tuple(slice(t * d, t * d + (o - 1) * s + 1, s)
                 for t, d, s, o in zip(tap, dilation, stride, out))


@NUMPY.quiet  # inf/nan inputs: no NumPy RuntimeWarning (NOTE [Quiet impls])
def conv_forward(x: Any, w: Any, stride: Ints, padding: Ints, dilation: Ints, groups: int) -> Any:
    """``[N, C, *S] * [O, C/G, *K] -> [N, O, *S_out]`` (no bias)."""
    xp = namespace_of(x)
    nd = x.ndim - 2
    n, o, cg, ks = x.shape[0], w.shape[0], w.shape[1], w.shape[2:]
    outs = tuple(out_size(x.shape[2 + i], ks[i], stride[i], padding[i], dilation[i])
                 for i in range(nd))
    if min(n, o, *outs) <= 0:
        return xp.zeros((n, o, *(max(v, 0) for v in outs)), dtype=x.dtype)
    win = windows_nd(pad_nd(x, padding, padding), ks, stride, dilation, outs)
    g, kk, pp = groups, math.prod(ks), math.prod(outs)
    sp = tuple(range(3, 3 + nd))
    kd = tuple(range(3 + nd, 3 + 2 * nd))
    cols = win.reshape(n, g, cg, *outs, *ks).transpose(0, 1, 2, *kd, *sp)
    cols = cols.reshape(n, g, cg * kk, pp)
    return xp.matmul(w.reshape(g, o // g, cg * kk), cols).reshape(n, o, *outs)


@NUMPY.quiet  # inf/nan inputs: no NumPy RuntimeWarning (NOTE [Quiet impls])
def conv_input_grad(
    g: Any, w: Any, in_sizes: Ints, stride: Ints, padding: Ints, dilation: Ints, groups: int
) -> Any:
    """Adjoint of `conv_forward` in its input (also the transposed convolution of `g` by `w`)."""
    xp = namespace_of(g)
    nd = g.ndim - 2
    n, o, outs = g.shape[0], g.shape[1], g.shape[2:]
    cg, ks = w.shape[1], w.shape[2:]
    c, kk = cg * groups, math.prod(ks)
    wmat = w.reshape(groups, o // groups, cg * kk).transpose(0, 2, 1)
    cols = xp.matmul(wmat, g.reshape(n, groups, o // groups, math.prod(outs)))
    cols = cols.reshape(n, c, *ks, *outs)
    full = tuple(max(in_sizes[i] + 2 * padding[i], (outs[i] - 1) * stride[i]
                     + (ks[i] - 1) * dilation[i] + 1) for i in range(nd))
    res = xp.zeros((n, c, *full), dtype=cols.dtype)
    for tap in itertools.product(*(range(k) for k in ks)):
        res[(slice(None), slice(None), *_tap_slices(tap, dilation, stride, outs))] += cols[
            (slice(None), slice(None), *tap)]
    return res[(slice(None), slice(None),
                *(slice(p, p + s) for p, s in zip(padding, in_sizes)))]


@NUMPY.quiet  # inf/nan inputs: no NumPy RuntimeWarning (NOTE [Quiet impls])
def conv_weight_grad(
    x: Any, g: Any, w_shape: Ints, stride: Ints, padding: Ints, dilation: Ints, groups: int
) -> Any:
    """Adjoint of `conv_forward` in its weight: ``-> [O, C/G, *K]``."""
    xp = namespace_of(x)
    nd = x.ndim - 2
    n, o, outs = x.shape[0], g.shape[1], g.shape[2:]
    cg, ks = w_shape[1], tuple(w_shape[2:])
    if min(n, *outs) <= 0:
        return xp.zeros(tuple(w_shape), dtype=x.dtype)
    win = windows_nd(pad_nd(x, padding, padding), ks, stride, dilation, outs)
    gg, kk, pp = groups, math.prod(ks), math.prod(outs)
    sp = tuple(range(3, 3 + nd))
    kd = tuple(range(3 + nd, 3 + 2 * nd))
    cols = win.reshape(n, gg, cg, *outs, *ks).transpose(1, 2, *kd, 0, *sp)
    cols = cols.reshape(gg, cg * kk, n * pp)
    gmat = g.reshape(n, gg, o // gg, pp).transpose(1, 2, 0, 3).reshape(gg, o // gg, -1)
    return xp.matmul(gmat, cols.transpose(0, 2, 1)).reshape(tuple(w_shape))


@NUMPY.quiet  # inf/nan inputs: no NumPy RuntimeWarning (NOTE [Quiet impls])
def conv_transpose(
    x: Any, w: Any, stride: Ints, padding: Ints, output_padding: Ints, dilation: Ints, groups: int
) -> Any:
    """Transposed convolution ``[N, Cin, *S] * [Cin, Cout/G, *K] -> [N, Cout, *S']``."""
    sizes = tuple(transposed_size(x.shape[2 + i], w.shape[2 + i], stride[i], padding[i],
                                  dilation[i], output_padding[i]) for i in range(x.ndim - 2))
    return conv_input_grad(x, w, sizes, stride, padding, dilation, groups)


__all__ = ["pad_nd", "windows_nd", "conv_forward", "conv_input_grad", "conv_weight_grad",
           "conv_transpose"]
