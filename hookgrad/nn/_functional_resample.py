"""Resampling of `hookgrad.nn.functional`: ``interpolate`` (and the deprecated ``upsample*``),
``pixel_shuffle``/``pixel_unshuffle`` and ``pad``.

``interpolate`` validates its arguments as PyTorch's Python function does (same exception types
and messages), then binds one upsampling primitive per mode and rank
(`hookgrad._ops.upsample`); ``area`` mode is adaptive average pooling, as in PyTorch.
"""

from __future__ import annotations

import warnings
from typing import Any

from hookgrad._ops._checks import tensor_arguments
from hookgrad._dispatch import bind
from hookgrad._functional.rearrange import pad
from hookgrad._ops import layers as _L
from hookgrad._ops.upsample import UPSAMPLE, output_sizes
from hookgrad._tensor import Tensor
from hookgrad.nn import _functional_layers as _FL
from hookgrad.nn import _functional_pool as _FP

__all__ = ["interpolate", "upsample", "upsample_nearest", "upsample_bilinear", "pixel_shuffle",
           "pixel_unshuffle", "pad"]

_MODES = "nearest | linear | bilinear | bicubic | trilinear | lanczos | area | nearest-exact"
_RANK_OF = {"linear": 1, "bilinear": 2, "bicubic": 2, "trilinear": 3}


def _sizes(input: Tensor, nd: int, size: Any, scale_factor: Any) -> tuple[Any, Any]:
    """``(output_size or None, scale factors or None)``, checked as PyTorch checks them."""
    spatial = list(input.shape)[2:]
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    if size is not None:
        if isinstance(size, (list, tuple)):
            if len(size) != nd:
                raise ValueError(
                    "Input and output must have the same number of spatial dimensions, but got "
                    f"input with spatial dimensions of {spatial} and output size of {size}. "
                    "Please provide input tensor in (N, C, d1, d2, ...,dK) format and output "
                    "size in (o1, o2, ...,oK) format.")
            return tuple(int(s) for s in size), None
        return (int(size),) * nd, None
    if scale_factor is None:
        raise ValueError("either size or scale_factor should be defined")
    if isinstance(scale_factor, (list, tuple)):
        if len(scale_factor) != nd:
            raise ValueError(
                "Input and scale_factor must have the same number of spatial dimensions, but "
                f"got input with spatial dimensions of {spatial} and scale_factor of shape "
                f"{scale_factor}. Please provide input tensor in (N, C, d1, d2, ...,dK) format "
                "and scale_factor in (s1, s2, ...,sK) format.")
        return None, tuple(float(s) for s in scale_factor)
    return None, (float(scale_factor),) * nd


def _check_sizes(spatial: list, out: list) -> None:
    """The upsample kernels' check: every input and output spatial size positive."""
    if min(spatial + out) > 0:
        return
    names = "DHW"[3 - len(spatial):]
    ins = ", ".join(f"{n}: {v}" for n, v in zip(names, spatial))
    outs = ", ".join(f"{n}: {v}" for n, v in zip(names, out))
    raise RuntimeError(f"Input and output sizes should be greater than 0, but got input ({ins}) "
                       f"and output ({outs})")


def interpolate(
    input: Tensor,
    size: Any = None,
    scale_factor: Any = None,
    mode: str = "nearest",
    align_corners: bool | None = None,
    recompute_scale_factor: bool | None = None,
    antialias: bool = False,
) -> Tensor:
    """Resize the spatial dims of ``[N, C, *spatial]`` (1 to 3 spatial dims).

    Modes ``nearest``, ``nearest-exact``, ``linear`` (3-d input), ``bilinear``/``bicubic``
    (4-d), ``trilinear`` (5-d) and ``area``. Without ``recompute_scale_factor`` a given
    ``scale_factor`` is passed to the kernel (it sets the source-index arithmetic, as PyTorch's).

    Returns:
        The resized tensor (``UpsampleNearest2DBackward0``, ``UpsampleBilinear2DBackward0``...).

    Raises:
        ValueError: on both or neither of `size`/`scale_factor`, mismatched ranks,
            `align_corners` with a nearest mode, or `antialias`.
        NotImplementedError: on a mode that does not fit the input's rank, or an unknown mode.

    Example:
        >>> import hookgrad as torch
        >>> x = torch.tensor([[[1.0, 2.0]]])
        >>> torch.nn.functional.interpolate(x, scale_factor=2).tolist()
        [[[1.0, 1.0, 2.0, 2.0]]]

    Mirrors: ``torch.nn.functional.interpolate``.
    """
    nd = input.dim() - 2
    if not input.is_floating_point() and 1 <= nd <= 3:  # the CPU kernels are floating only
        kernel = {"bicubic": "compute_indices_weights_cubic",
                  "area": f"adaptive_avg_pool{nd}d"}.get(
            mode, "compute_indices_weights_nearest" if nd == 1 else
            f"upsample_{'nearest' if 'nearest' in mode else mode}{nd}d_channels_last")
        raise NotImplementedError(f"\"{kernel}\" not implemented for "
                                  f"'{input.dtype.legacy_name[:-6]}'")
    if mode in ("nearest", "area", "nearest-exact"):
        if align_corners is not None:
            raise ValueError("align_corners option can only be set with the interpolating "
                             "modes: linear | bilinear | bicubic | trilinear")
    elif align_corners is None:
        align_corners = False
    if antialias:
        raise ValueError("Anti-alias option is restricted to bilinear, bicubic, and lanczos "
                         "modes and requires a 4-D tensor as input"
                         if not (mode in ("bilinear", "bicubic") and nd == 2) else
                         "hookgrad: antialias=True is not supported")
    out_size, scales = _sizes(input, max(nd, 0), size, scale_factor)
    if out_size is None:
        out_size = output_sizes(list(input.shape)[2:], scales)
        if recompute_scale_factor:
            scales = None
    if scales is None:
        scales = (None,) * nd
    if mode == "area" and nd in (1, 2, 3):
        fn = {1: _FP.adaptive_avg_pool1d, 2: _FP.adaptive_avg_pool2d,
              3: _FL.adaptive_avg_pool3d}[nd]
        return fn(input, out_size)
    if mode in ("nearest", "nearest-exact") and nd in (1, 2, 3):
        _check_sizes(list(input.shape)[2:], list(out_size))
        return bind(UPSAMPLE[mode, nd], (input,), {"output_size": out_size, "scales": scales})
    if mode in _RANK_OF:
        if _RANK_OF[mode] != nd:
            raise NotImplementedError(
                f"Got {input.dim()}D input, but {mode} mode needs {_RANK_OF[mode] + 2}D input")
        _check_sizes(list(input.shape)[2:], list(out_size))
        return bind(UPSAMPLE[mode, nd], (input,), {
            "output_size": out_size, "align_corners": bool(align_corners), "scales": scales})
    raise NotImplementedError(
        f"Input Error: Only 3D, 4D and 5D input Tensors supported (got {input.dim()}D) for the "
        f"modes: {_MODES} (got {mode})")


def upsample(input: Tensor, size: Any = None, scale_factor: Any = None, mode: str = "nearest",
             align_corners: bool | None = None) -> Tensor:
    """Deprecated alias of `interpolate` (warns as PyTorch does).

    Mirrors: ``torch.nn.functional.upsample``.
    """
    warnings.warn("`nn.functional.upsample` is deprecated. Use `nn.functional.interpolate` "
                  "instead.", stacklevel=2)
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input: Tensor, size: Any = None, scale_factor: Any = None) -> Tensor:
    """Deprecated: `interpolate` with ``mode="nearest"``.

    Mirrors: ``torch.nn.functional.upsample_nearest``.
    """
    warnings.warn("`nn.functional.upsample_nearest` is deprecated. Use "
                  "`nn.functional.interpolate` instead.", stacklevel=2)
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input: Tensor, size: Any = None, scale_factor: Any = None) -> Tensor:
    """Deprecated: `interpolate` with ``mode="bilinear", align_corners=True``.

    Mirrors: ``torch.nn.functional.upsample_bilinear``.
    """
    warnings.warn("`nn.functional.upsample_bilinear` is deprecated. Use "
                  "`nn.functional.interpolate` instead.", stacklevel=2)
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)


def _check_shuffle(input: Tensor, factor: int, name: str, up: bool) -> None:
    if input.dim() < 3:
        raise RuntimeError(f"{name} expects input to have at least 3 dimensions, but got input "
                           f"with {input.dim()} dimension(s)")
    if factor <= 0:
        word = "upscale_factor" if up else "downscale_factor"
        raise RuntimeError(f"{name} expects a positive {word}, but got {factor}")
    c, h, w = list(input.shape)[-3:]
    if up and c % (factor * factor):
        raise RuntimeError("pixel_shuffle expects its input's 'channel' dimension to be "
                           f"divisible by the square of upscale_factor, but input.size(-3)={c} "
                           f"is not divisible by {factor * factor}")
    if not up and (h % factor or w % factor):
        dim, n = ("height", h) if h % factor else ("width", w)
        pos = -2 if dim == "height" else -1
        raise RuntimeError(f"pixel_unshuffle expects {dim} to be divisible by downscale_factor, "
                           f"but input.size({pos})={n} is not divisible by {factor}")


@tensor_arguments
def pixel_shuffle(input: Tensor, upscale_factor: int) -> Tensor:
    """``[*, C*r*r, H, W] -> [*, C, H*r, W*r]`` (``PixelShuffleBackward0``).

    Raises:
        RuntimeError: on fewer than 3 dims or channels not divisible by ``r*r``.

    Mirrors: ``torch.nn.functional.pixel_shuffle``.
    """
    _check_shuffle(input, int(upscale_factor), "pixel_shuffle", True)
    return bind(_L.PIXEL_SHUFFLE, (input,), {"upscale_factor": int(upscale_factor)})


def pixel_unshuffle(input: Tensor, downscale_factor: int) -> Tensor:
    """``[*, C, H*r, W*r] -> [*, C*r*r, H, W]`` (``PixelUnshuffleBackward0``).

    Raises:
        RuntimeError: on fewer than 3 dims or sizes not divisible by ``r``.

    Mirrors: ``torch.nn.functional.pixel_unshuffle``.
    """
    _check_shuffle(input, int(downscale_factor), "pixel_unshuffle", False)
    return bind(_L.PIXEL_UNSHUFFLE, (input,), {"downscale_factor": int(downscale_factor)})

