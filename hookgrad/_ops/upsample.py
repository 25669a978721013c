"""Upsampling primitives (``F.interpolate``'s ops) and their backward ops.

Layer 3. PyTorch shows one node per mode and rank (``UpsampleNearest2DBackward0``,
``UpsampleBilinear2DBackward0``, ``UpsampleBicubic2DBackward0``...), so each is a primitive.

Every mode is separable: output sample ``o`` along a spatial dim is a fixed weighted sum of input
samples along that dim (one weight for nearest, two for linear, four clamped taps for bicubic).
The op therefore applies one small ``[out, in]`` interpolation matrix per spatial dim, built from
the sizes and PyTorch's source-index arithmetic (``area_pixel_compute_source_index``). Its
backward applies the transposed matrices; that backward is itself a primitive (as in ATen), linear
in the gradient, whose own derivative is the forward op again, so double backward works with one
body per rule. Nearest modes gather instead of multiplying, so infinities pass through unchanged.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from hookgrad._backend import namespace_of
from hookgrad._dispatch import bind
from hookgrad._ops.registry import defop
from hookgrad._tensor import Tensor

Ints = Sequence[int]
_CUBIC_A = -0.75  # PyTorch's bicubic convolution coefficient


def _scale(n_in: int, n_out: int, align_corners: bool, scale: float | None) -> float:
    """PyTorch's ``area_pixel_compute_scale``."""
    if align_corners:
        return (n_in - 1) / (n_out - 1) if n_out > 1 else 0.0
    return 1.0 / scale if scale is not None and scale > 0 else n_in / n_out


def _nearest_index(n_in: int, n_out: int, scale: float | None, exact: bool) -> np.ndarray:
    if not exact and n_out == n_in:  # ATen's nearest shortcuts, whatever the scale
        return np.arange(n_out)
    if not exact and n_out == 2 * n_in:
        return np.arange(n_out) >> 1
    s = 1.0 / scale if scale is not None and scale > 0 else n_in / n_out
    dst = np.arange(n_out, dtype=np.float64) + (0.5 if exact else 0.0)
    # float32 arithmetic, as ATen's CPU kernel computes the source index
    src = np.floor((dst * np.float32(s)).astype(np.float32)).astype(np.int64)
    return np.minimum(src, n_in - 1)


def _cubic_weights(t: np.ndarray) -> list[np.ndarray]:
    a = _CUBIC_A

    def near(x: np.ndarray) -> np.ndarray:
        return ((a + 2) * x - (a + 3)) * x * x + 1

    def far(x: np.ndarray) -> np.ndarray:
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a

    return [far(t + 1), near(t), near(1 - t), far(2 - t)]


def _matrix(mode: str, n_in: int, n_out: int, align_corners: bool, scale: float | None) -> Any:
    """The ``[n_out, n_in]`` interpolation matrix of a linear or cubic mode along one dim."""
    if n_in == n_out and mode != "cubic":  # ATen's linear kernel copies when sizes agree
        return np.eye(n_in)
    s = _scale(n_in, n_out, align_corners, scale)
    dst = np.arange(n_out, dtype=np.float64)
    src = s * dst if align_corners else s * (dst + 0.5) - 0.5
    m = np.zeros((n_out, n_in))
    rows = np.arange(n_out)
    if mode == "cubic":
        i0 = np.floor(src).astype(np.int64)
        for k, w in enumerate(_cubic_weights(src - i0)):
            np.add.at(m, (rows, np.clip(i0 - 1 + k, 0, n_in - 1)), w)
        return m
    src = np.maximum(src, 0.0)
    i0 = np.minimum(np.floor(src).astype(np.int64), n_in - 1)
    i1 = np.minimum(i0 + 1, n_in - 1)
    lam = src - i0
    np.add.at(m, (rows, i0), 1.0 - lam)
    np.add.at(m, (rows, i1), lam)
    return m


def _along(x: Any, m: Any, dim: int) -> Any:
    """``m`` applied to axis `dim` of `x` (``out[.., o, ..] = sum_i m[o, i] x[.., i, ..]``)."""
    xp = namespace_of(x)
    return xp.moveaxis(xp.tensordot(x, m, axes=([dim], [1])), -1, dim)


def _resample(
    x: Any, mode: str, sizes_out: Ints, align_corners: bool, scales: Sequence[Any], back: bool
) -> Any:
    """Forward (``back=False``: `x` has the input sizes) or adjoint resampling of `x`."""
    xp = namespace_of(x)
    nd = len(sizes_out)
    for i in range(nd):
        dim = x.ndim - nd + i
        n_out = sizes_out[i] if not back else x.shape[dim]
        n_in = x.shape[dim] if not back else sizes_out[i]
        if mode in ("nearest", "nearest-exact"):
            idx = _nearest_index(n_in, n_out, scales[i], mode == "nearest-exact")
            if not back:
                x = xp.take(x, xp.asarray(idx), axis=dim)
                continue
            m = np.zeros((n_out, n_in))
            m[np.arange(n_out), idx] = 1.0
        else:
            m = _matrix(mode, n_in, n_out, align_corners, scales[i])
        m = xp.asarray(m.T if back else m, dtype=x.dtype)
        x = _along(x, m, dim)
    return xp.ascontiguousarray(x)


def _define(name: str, node: str, mode: str, nd: int, has_align: bool) -> tuple[Any, Any]:
    """Register the forward op `name` and its ``<name>_backward`` op."""
    params = ("output_size", "align_corners", "scales") if has_align else ("output_size", "scales")

    def impl(self: Any, output_size: Ints, scales: Sequence[Any], align_corners: bool = False) -> Any:
        return _resample(self, mode, tuple(output_size), align_corners, scales, False)

    def back_impl(
        grad_output: Any,
        output_size: Ints,
        input_size: Ints,
        scales: Sequence[Any],
        align_corners: bool = False,
    ) -> Any:
        out = _resample(grad_output, mode, tuple(input_size)[-nd:], align_corners, scales, True)
        return out.reshape(tuple(input_size))

    def vjp(grad: Tensor, self_shape: Ints, output_size: Ints, scales: Any, **kw: Any) -> Tensor:
        p = {"output_size": tuple(output_size), "input_size": tuple(self_shape), "scales": scales}
        return bind(backward, (grad,), {**p, **kw})

    def back_vjp(grad: Tensor, output_size: Ints, scales: Any, **kw: Any) -> Tensor:
        return bind(forward, (grad,), {"output_size": tuple(output_size), "scales": scales, **kw})

    if has_align:
        rule = lambda grad, self_shape, output_size, scales, align_corners: vjp(  # noqa: E731
            grad, self_shape, output_size, scales, align_corners=align_corners)
        back_rule = lambda grad, output_size, scales, align_corners: back_vjp(  # noqa: E731
            grad, output_size, scales, align_corners=align_corners)
    else:
        rule = lambda grad, self_shape, output_size, scales: vjp(  # noqa: E731
            grad, self_shape, output_size, scales)
        back_rule = lambda grad, output_size, scales: back_vjp(  # noqa: E731
            grad, output_size, scales)
    forward = defop(name, impl=impl, params=params, node_name=f"{node}Backward0",
                    vjp={"self": rule}, jvp="linear")
    backward = defop(f"{name}_backward", impl=back_impl, inputs=("grad_output",),
                     params=("output_size", "input_size", *params[1:]),
                     node_name=f"{node}BackwardBackward0",
                     vjp={"grad_output": back_rule}, jvp="linear")
    return forward, backward


UPSAMPLE: dict[tuple[str, int], Any] = {}
for _nd, _rank in ((1, "1D"), (2, "2D"), (3, "3D")):
    UPSAMPLE["nearest", _nd] = _define(
        f"upsample_nearest{_nd}d", f"UpsampleNearest{_rank}", "nearest", _nd, False)[0]
    UPSAMPLE["nearest-exact", _nd] = _define(
        f"_upsample_nearest_exact{_nd}d", f"UpsampleNearestExact{_rank}", "nearest-exact", _nd,
        False)[0]
UPSAMPLE["linear", 1] = _define("upsample_linear1d", "UpsampleLinear1D", "linear", 1, True)[0]
UPSAMPLE["bilinear", 2] = _define(
    "upsample_bilinear2d", "UpsampleBilinear2D", "linear", 2, True)[0]
UPSAMPLE["trilinear", 3] = _define(
    "upsample_trilinear3d", "UpsampleTrilinear3D", "linear", 3, True)[0]
UPSAMPLE["bicubic", 2] = _define("upsample_bicubic2d", "UpsampleBicubic2D", "cubic", 2, True)[0]


def output_sizes(in_sizes: Ints, scale_factors: Sequence[float]) -> tuple[int, ...]:
    """``floor(in * scale)`` per spatial dim (PyTorch's ``_upsample_compute_output_size``)."""
    return tuple(int(math.floor(float(n) * float(s))) for n, s in zip(in_sizes, scale_factors))


__all__ = ["UPSAMPLE", "output_sizes"]
