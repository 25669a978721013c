"""Array kernels of convolution: forward, the two adjoints, on NumPy or CuPy arrays.

Layer 3 (backend seam only; no Tensor). Every kernel works on 2-d spatial data laid out
``[N, C, H, W]``; one-dimensional convolution is the ``H = 1`` case (`as_2d`).

NOTE [im2col view]
The receptive fields of a convolution are a *view* of the (padded) input: `windows` builds
``[N, C, OH, OW, KH, KW]`` with ``as_strided`` (stride and dilation are just larger steps), so
no Python loop ever visits a pixel. Forward and the weight gradient are then one matrix
multiply each over that view (BLAS does the copy into columns). The input gradient (the
transposed convolution, "col2im") is one matrix multiply into columns followed by a loop over
the ``KH * KW`` kernel taps, each adding a strided slab: a scatter-free formulation that never
loops over pixels or the batch.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from hookgrad._backend import NUMPY, namespace_of
from hookgrad._ops import _conv_chunked

Pair = tuple[int, int]


def out_size(size: int, k: int, s: int, p: int, d: int) -> int:
    """Output length of a convolution along one dim (floor mode)."""
    return (size + 2 * p - d * (k - 1) - 1) // s + 1


def transposed_size(size: int, k: int, s: int, p: int, d: int, op: int) -> int:
    """Output length of a transposed convolution along one dim."""
    return (size - 1) * s - 2 * p + d * (k - 1) + op + 1


def as_2d(params: Sequence[Sequence[int]], fill: Sequence[int]) -> list[Pair]:
    """Per-dim parameter tuples of a 1-d op extended with the neutral `fill` value for H."""
    return [(f, p[0]) if len(p) == 1 else (p[0], p[1]) for p, f in zip(params, fill, strict=True)]


def pad2d(x: Any, ph: Pair, pw: Pair, value: float = 0.0) -> Any:
    """`x` with its last two dims padded by ``(before, after)`` amounts."""
    if not (ph[0] or ph[1] or pw[0] or pw[1]):
        return x
    xp = namespace_of(x)
    widths = [(0, 0)] * (x.ndim - 2) + [ph, pw]
    return xp.pad(x, widths, mode="constant", constant_values=value)


def windows(xp_arr: Any, kernel: Pair, stride: Pair, dilation: Pair, out_hw: Pair) -> Any:
    """The ``[..., OH, OW, KH, KW]`` receptive-field view of a padded array (NOTE [im2col view])."""
    xp = namespace_of(xp_arr)
    *lead, _, _ = xp_arr.shape
    *lead_st, sh, sw = xp_arr.strides
    shape = (*lead, out_hw[0], out_hw[1], kernel[0], kernel[1])
    strides = (*lead_st, sh * stride[0], sw * stride[1], sh * dilation[0], sw * dilation[1])
    if xp is np:  # a read-only view: windows overlap, so writing through one would be wrong
        return np.lib.stride_tricks.as_strided(
            xp_arr, shape=shape, strides=strides, writeable=False
        )
    return xp.lib.stride_tricks.as_strided(xp_arr, shape=shape, strides=strides)  # CuPy


def _chunkable(a: Any, b: Any, groups: int) -> bool:
    """NumPy arrays of one float dtype, one group: the chunked kernels apply."""
    return (groups == 1 and type(a) is np.ndarray and type(b) is np.ndarray
            and a.dtype == b.dtype and a.dtype.kind == "f")


@NUMPY.quiet  # inf/nan inputs: no NumPy RuntimeWarning (NOTE [Quiet impls])
def conv2d_forward(x: Any, w: Any, stride: Pair, padding: Pair, dilation: Pair, groups: int) -> Any:
    """``[N, C, H, W] * [O, C/G, KH, KW] -> [N, O, OH, OW]`` (no bias)."""
    xp = namespace_of(x)
    n, c, h, wd = x.shape
    o, cg, kh, kw = w.shape
    oh = out_size(h, kh, stride[0], padding[0], dilation[0])
    ow = out_size(wd, kw, stride[1], padding[1], dilation[1])
    if min(n, o, oh, ow) <= 0:
        return xp.zeros((n, o, max(oh, 0), max(ow, 0)), dtype=x.dtype)
    padded = pad2d(x, (padding[0],) * 2, (padding[1],) * 2)
    win = windows(padded, (kh, kw), stride, dilation, (oh, ow))  # [N, C, OH, OW, KH, KW]
    if _chunkable(x, w, groups):  # NOTE [Chunked im2col]
        return _conv_chunked.forward(win, w)
    g = groups
    # columns laid out [N, G, C/G*KH*KW, OH*OW] so one batched matmul yields NCHW directly
    cols = win.reshape(n, g, cg, oh, ow, kh, kw).transpose(0, 1, 2, 5, 6, 3, 4)
    cols = cols.reshape(n, g, cg * kh * kw, oh * ow)
    wmat = w.reshape(g, o // g, cg * kh * kw)
    return xp.matmul(wmat, cols).reshape(n, o, oh, ow)


@NUMPY.quiet  # inf/nan inputs: no NumPy RuntimeWarning (NOTE [Quiet impls])
def conv2d_input_grad(
    g: Any, w: Any, in_hw: Pair, stride: Pair, padding: Pair, dilation: Pair, groups: int
) -> Any:
    """Adjoint of `conv2d_forward` in its input: ``[N, O, OH, OW] -> [N, C, H, W]``.

    This is also the transposed convolution of `g` by `w` with output size `in_hw`.
    """
    xp = namespace_of(g)
    n, o, oh, ow = g.shape
    _, cg, kh, kw = w.shape
    h, wd = in_hw
    c = cg * groups
    gg = groups
    hp = max(h + 2 * padding[0], (oh - 1) * stride[0] + (kh - 1) * dilation[0] + 1)
    wp = max(wd + 2 * padding[1], (ow - 1) * stride[1] + (kw - 1) * dilation[1] + 1)
    if _chunkable(g, w, groups):  # NOTE [Chunked im2col]
        out = np.zeros((n, c, hp, wp), dtype=np.result_type(g, w))
        _conv_chunked.input_grad(g, w, out, stride, dilation)
        return out[:, :, padding[0] : padding[0] + h, padding[1] : padding[1] + wd]
    wmat = w.reshape(gg, o // gg, cg * kh * kw).transpose(0, 2, 1)  # [G, Cg*K*K, Og]
    cols = xp.matmul(wmat, g.reshape(n, gg, o // gg, oh * ow))  # [N, G, Cg*K*K, OH*OW]
    cols = cols.reshape(n, c, kh, kw, oh, ow)
    out = xp.zeros((n, c, hp, wp), dtype=cols.dtype)
    eh, ew = (oh - 1) * stride[0] + 1, (ow - 1) * stride[1] + 1
    for i in range(kh):  # loop over kernel taps only (NOTE [im2col view])
        r0 = i * dilation[0]
        for j in range(kw):
            c0 = j * dilation[1]
            out[:, :, r0 : r0 + eh : stride[0], c0 : c0 + ew : stride[1]] += cols[:, :, i, j]
    return out[:, :, padding[0] : padding[0] + h, padding[1] : padding[1] + wd]


@NUMPY.quiet  # inf/nan inputs: no NumPy RuntimeWarning (NOTE [Quiet impls])
def conv2d_weight_grad(
    x: Any, g: Any, w_shape: Sequence[int], stride: Pair, padding: Pair, dilation: Pair, groups: int
) -> Any:
    """Adjoint of `conv2d_forward` in its weight: ``-> [O, C/G, KH, KW]``."""
    xp = namespace_of(x)
    n, c, _, _ = x.shape
    _, o, oh, ow = g.shape
    o_, cg, kh, kw = w_shape
    if min(n, oh, ow) <= 0:
        return xp.zeros(tuple(w_shape), dtype=x.dtype)
    padded = pad2d(x, (padding[0],) * 2, (padding[1],) * 2)
    win = windows(padded, (kh, kw), stride, dilation, (oh, ow))
    if _chunkable(x, g, groups):  # NOTE [Chunked im2col]
        return _conv_chunked.weight_grad(win, g).reshape(o_, cg, kh, kw)
    gg = groups
    # columns [G, Cg*K*K, N*OH*OW]: the copy runs along output rows (long contiguous runs);
    # matmul takes the transposed view without another copy
    cols = win.reshape(n, gg, cg, oh, ow, kh, kw).transpose(1, 2, 5, 6, 0, 3, 4)
    cols = cols.reshape(gg, cg * kh * kw, n * oh * ow)
    gmat = g.reshape(n, gg, o // gg, oh * ow).transpose(1, 2, 0, 3).reshape(gg, o // gg, -1)
    return xp.matmul(gmat, cols.transpose(0, 2, 1)).reshape(o_, cg, kh, kw)


@NUMPY.quiet  # inf/nan inputs: no NumPy RuntimeWarning (NOTE [Quiet impls])
def conv2d_transpose(
    x: Any, w: Any, stride: Pair, padding: Pair, output_padding: Pair, dilation: Pair, groups: int
) -> Any:
    """Transposed convolution ``[N, Cin, H, W] * [Cin, Cout/G, KH, KW] -> [N, Cout, H', W']``."""
    _, _, h, wd = x.shape
    _, _, kh, kw = w.shape
    oh = transposed_size(h, kh, stride[0], padding[0], dilation[0], output_padding[0])
    ow = transposed_size(wd, kw, stride[1], padding[1], dilation[1], output_padding[1])
    return conv2d_input_grad(x, w, (oh, ow), stride, padding, dilation, groups)


__all__ = [
    "out_size",
    "transposed_size",
    "as_2d",
    "pad2d",
    "windows",
    "conv2d_forward",
    "conv2d_input_grad",
    "conv2d_weight_grad",
    "conv2d_transpose",
]
