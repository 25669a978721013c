"""``nn.functional`` entries added by the census: one_hot, unfold/fold, channel_shuffle, rms_norm,
local_response_norm, lp_pool, channel dropout and the margin/embedding/NLL losses.

Mirrors: the ``torch.nn.functional`` functions of the same names. Every function is a composite
of hookgrad ops (gradients come from them); reductions take PyTorch's ``reduction`` strings.
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import ml_dtypes
import numpy as np

from hookgrad import _backend
from hookgrad._dispatch import bind
from hookgrad._dtypes import int64
from hookgrad._functional import creation as C
from hookgrad._functional import pointwise as P
from hookgrad._functional import random as R
from hookgrad._functional._random_kernels import rrelu_slopes
from hookgrad._functional.rearrange import pad as _pad
from hookgrad._functional import shape as S
from hookgrad._ops._checks import tensor_arguments
from hookgrad._ops import layers as _LY
from hookgrad._ops.registry import PRIMITIVES
from hookgrad.nn._functional_linear import keep_noise
from hookgrad._tensor import Tensor

__all__ = ["one_hot", "unfold", "fold", "channel_shuffle", "native_channel_shuffle", "rms_norm",
           "local_response_norm", "lp_pool1d", "lp_pool2d", "lp_pool3d", "dropout1d",
           "dropout2d", "dropout3d", "alpha_dropout", "feature_alpha_dropout", "rrelu", "rrelu_",
           "gumbel_softmax"]


def one_hot(input: Tensor, num_classes: int = -1) -> Tensor:
    """int64 one-hot encoding along a new last dimension. Mirrors: ``torch.nn.functional.one_hot``."""
    if input.dtype is not int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    if getattr(input, "_bt_value", None) is not None:
        # under vmap PyTorch checks no values: a comparison with the classes (a value outside
        # them gives a zero row)
        if num_classes < 0:
            raise RuntimeError("When vmap-ing torch.nn.functional.one_hot, please provide an "
                               "explicit positive num_classes argument.")
        return (input.unsqueeze(-1) == C.arange(num_classes)).to(int64)  # type: ignore
    data = input._data
    if num_classes == -1:
        if data.size == 0:
            raise RuntimeError("Can not infer total number of classes from empty tensor.")
        num_classes = int(data.max()) + 1
    if data.size and data.min() < 0:
        raise RuntimeError("Class values must be non-negative.")
    if data.size and data.max() >= num_classes:
        raise RuntimeError("Class values must be smaller than num_classes.")
    out = (data[..., None] == np.arange(num_classes)).astype(np.int64)
    return C.from_numpy(np.ascontiguousarray(out))


def _pair(v: Any) -> tuple:
    return tuple(v) if isinstance(v, (tuple, list)) else (v, v)


def _patch_index(c: int, hp: int, wp: int, k: tuple, d: tuple, s: tuple) -> tuple:
    """Flat indices into a (C, Hp, Wp) block for every (c, ki, kj, l) of the unfolded layout."""
    oh = (hp - d[0] * (k[0] - 1) - 1) // s[0] + 1
    ow = (wp - d[1] * (k[1] - 1) - 1) // s[1] + 1
    ci, ki, kj = np.meshgrid(np.arange(c), np.arange(k[0]), np.arange(k[1]), indexing="ij")
    rows = ki.reshape(-1, 1) * d[0] + (np.arange(oh) * s[0]).repeat(ow)[None, :]
    cols = kj.reshape(-1, 1) * d[1] + np.tile(np.arange(ow) * s[1], oh)[None, :]
    flat = ci.reshape(-1, 1) * hp * wp + rows * wp + cols
    return flat.astype(np.int64), oh * ow


def unfold(input: Tensor, kernel_size: Any, dilation: Any = 1, padding: Any = 0,
           stride: Any = 1) -> Tensor:
    """Sliding blocks as columns, (N, C*kh*kw, L) (im2col). Mirrors: ``torch.nn.functional.unfold``."""
    if input.dim() not in (3, 4):
        raise NotImplementedError("Input Error: Only 3D or 4D input Tensors are supported "
                                  f"(got {input.dim()}D)")
    batched = input.dim() == 4
    x = input if batched else input.unsqueeze(0)
    k, d, p, s = _pair(kernel_size), _pair(dilation), _pair(padding), _pair(stride)
    x = _pad(x, (p[1], p[1], p[0], p[0])) if any(p) else x
    n, c, hp, wp = x.shape
    idx, length = _patch_index(c, hp, wp, k, d, s)
    cols = x.reshape(n, -1)[:, C.from_numpy(idx.reshape(-1))].reshape(n, c * k[0] * k[1], length)
    return cols if batched else cols.squeeze(0)


def fold(input: Tensor, output_size: Any, kernel_size: Any, dilation: Any = 1, padding: Any = 0,
         stride: Any = 1) -> Tensor:
    """Sum columns back into an image (col2im), the adjoint of `unfold`.

    Mirrors: ``torch.nn.functional.fold``.
    """
    if input.dim() not in (2, 3):
        raise NotImplementedError("Input Error: Only unbatched (2D) or batched (3D) input "
                                  f"Tensors are supported (got {input.dim()}D)")
    batched = input.dim() == 3
    cols = input if batched else input.unsqueeze(0)
    k, d, p, s = _pair(kernel_size), _pair(dilation), _pair(padding), _pair(stride)
    out_h, out_w = _pair(output_size)
    hp, wp = out_h + 2 * p[0], out_w + 2 * p[1]
    n, ck, length = cols.shape
    c = ck // (k[0] * k[1])
    if c * k[0] * k[1] != ck:
        raise RuntimeError("Expected size of input's dimension 1 to be divisible by the product "
                           f"of kernel_size, but got input.size(1)={ck} and kernel_size={k}")
    idx, expect = _patch_index(c, hp, wp, k, d, s)
    if expect != length:
        raise RuntimeError(f"Given output_size={(out_h, out_w)}, kernel_size={k}, dilation={d}, "
                           f"padding={p}, stride={s}, expected size of input's dimension 2 to "
                           f"match the calculated number of sliding blocks {expect}, but got "
                           f"input.size(2)={length}.")
    flat = C.zeros(n, c * hp * wp, dtype=input.dtype)
    flat = flat.index_add(1, C.from_numpy(idx.reshape(-1)), cols.reshape(n, -1))
    img = flat.reshape(n, c, hp, wp)[:, :, p[0]:p[0] + out_h, p[1]:p[1] + out_w]
    return img if batched else img.squeeze(0)


@tensor_arguments
def channel_shuffle(input: Tensor, groups: int) -> Tensor:
    """Interleave channel groups (``ChannelShuffleBackward0``, a fresh tensor).

    Mirrors: ``torch.nn.functional.channel_shuffle``."""
    if input.dim() <= 2:
        raise RuntimeError(f"channel_shuffle expects input with > 2 dims, but got input with "
                           f"sizes {list(input.shape)}")
    n, c = input.shape[0], input.shape[1]
    if groups <= 0:
        raise RuntimeError(f"Number of groups to divide channels in must be positive. Value of "
                           f"groups:{groups}")
    if c % groups:
        raise RuntimeError(f"Number of channels must be divisible by groups. Got {c} channels "
                           f"and {groups} groups.")
    return bind(_LY.CHANNEL_SHUFFLE, (input,), {"groups": groups})


native_channel_shuffle = channel_shuffle


def rms_norm(input: Tensor, normalized_shape: Any, weight: Any = None,
             eps: float | None = None) -> Tensor:
    """x / sqrt(mean(x**2) + eps) over the trailing dims, times `weight`.

    Mirrors: ``torch.nn.functional.rms_norm``.
    """
    shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
    dims = tuple(range(-len(shape), 0))
    if eps is None:
        eps = float(ml_dtypes.finfo(input._data.dtype).eps)
    # ATen's composite, node for node (PowBackward0 saves the input once), then contiguous():
    # the result is row-major whatever the input's layout
    out = input * P.rsqrt(input.pow(2).mean(dims, keepdim=True) + eps)  # type: ignore
    if weight is not None:
        out = out * weight
    return out.contiguous()  # type: ignore[attr-defined]


def local_response_norm(input: Tensor, size: int, alpha: float = 1e-4, beta: float = 0.75,
                        k: float = 1.0) -> Tensor:
    """Normalise over `size` neighbouring channels. Mirrors: ``torch.nn.functional.local_response_norm``."""
    from hookgrad.nn._functional_layers import avg_pool3d
    from hookgrad.nn._functional_pool import avg_pool2d
    dim = input.dim()
    if dim < 3:
        raise ValueError(f"Expected 3D or higher dimensionality input (got {dim} dimensions)")
    if input._data.dtype.kind in "bc":  # its average pooling has no such kernels
        raise NotImplementedError(
            f"\"avg_pool{min(dim - 1, 3)}d\" not implemented for '{input.dtype.scalar_type}'")
    div = (input * input).unsqueeze(1)
    if dim == 3:
        div = _pad(div, (0, 0, size // 2, (size - 1) // 2))
        div = avg_pool2d(div, (size, 1), stride=1).squeeze(1)
    else:
        sizes = input.shape
        div = div.reshape(sizes[0], 1, sizes[1], sizes[2], -1)
        div = _pad(div, (0, 0, 0, 0, size // 2, (size - 1) // 2))
        div = avg_pool3d(div, (size, 1, 1), stride=1).squeeze(1).reshape(sizes)
    return input / (div * alpha + k) ** beta


def _lp_pool(input: Tensor, norm_type: float, kernel_size: Any, stride: Any, ceil_mode: bool,
             pool: Any, n: int) -> Tensor:
    ks = (kernel_size,) * n if isinstance(kernel_size, int) else tuple(kernel_size)
    out = pool(input ** norm_type if norm_type != 1 else input, ks, stride, 0, ceil_mode)
    return (P.sign(out) * P.relu(P.abs(out))).mul(math.prod(ks)) ** (1.0 / norm_type)


def lp_pool1d(input: Tensor, norm_type: float, kernel_size: int, stride: Any = None,
              ceil_mode: bool = False) -> Tensor:
    """Power-average pooling. Mirrors: ``torch.nn.functional.lp_pool1d``."""
    from hookgrad.nn._functional_pool import avg_pool1d
    return _lp_pool(input, norm_type, kernel_size, stride, ceil_mode, avg_pool1d, 1)


def lp_pool2d(input: Tensor, norm_type: float, kernel_size: Any, stride: Any = None,
              ceil_mode: bool = False) -> Tensor:
    """Mirrors: ``torch.nn.functional.lp_pool2d``."""
    from hookgrad.nn._functional_pool import avg_pool2d
    return _lp_pool(input, norm_type, kernel_size, stride, ceil_mode, avg_pool2d, 2)


def lp_pool3d(input: Tensor, norm_type: float, kernel_size: Any, stride: Any = None,
              ceil_mode: bool = False) -> Tensor:
    """Mirrors: ``torch.nn.functional.lp_pool3d``."""
    from hookgrad.nn._functional_layers import avg_pool3d
    return _lp_pool(input, norm_type, kernel_size, stride, ceil_mode, avg_pool3d, 3)


def _feature_dropout(input: Tensor, p: float, training: bool, inplace: bool) -> Tensor:
    """ATen's ``feature_dropout``: one draw per (sample, channel) of dims 0 and 1, whatever the
    rank (a 2-D input gets one draw per element)."""
    if input.dim() < 2:
        raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")
    if not training or p == 0.0:
        return input
    noise_shape = (*input.shape[:2], *([1] * (input.dim() - 2)))
    if p == 1.0:
        mask = C.zeros(noise_shape, dtype=input.dtype)
    else:
        mask = keep_noise(noise_shape, 1.0 - p, input).div_(1.0 - p)
    return input.mul_(mask) if inplace else input * mask


def _check_p(p: float) -> None:
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


def _unbatched_feature_dropout(input: Tensor, p: float, training: bool, inplace: bool,
                               batched: bool) -> Tensor:
    if batched:
        return _feature_dropout(input, p, training, inplace)
    # an input without a batch dimension is dropped as a batch of one, as PyTorch does
    out = _feature_dropout(input.unsqueeze_(0) if inplace else input.unsqueeze(0), p,
                           training, inplace)
    return out.squeeze_(0) if inplace else out.squeeze(0)


def dropout1d(input: Tensor, p: float = 0.5, training: bool = True,
              inplace: bool = False) -> Tensor:
    """Zero whole channels of (N, C, L) or (C, L) input.
    Mirrors: ``torch.nn.functional.dropout1d``."""
    _check_p(p)
    if input.dim() not in (2, 3):
        raise RuntimeError(
            f"dropout1d: Expected 2D or 3D input, but received a {input.dim()}D input. "
            "Note that dropout1d exists to provide channel-wise dropout on inputs with 1 "
            "spatial dimension, a channel dimension, and an optional batch dimension "
            "(i.e. 2D or 3D inputs).")
    return _unbatched_feature_dropout(input, p, training, inplace, input.dim() == 3)


def _rank_warning(name: str, dim: int, spatial: str, allowed: str) -> None:
    warnings.warn(
        f"{name}: Received a {dim}-D input to {name}, which is deprecated and will result in "
        "an error in a future release. To retain the behavior and silence this warning, please "
        f"use dropout instead. Note that {name} exists to provide channel-wise dropout on "
        f"inputs with {spatial} spatial dimensions, a channel dimension, and an optional batch "
        f"dimension (i.e. {allowed} inputs).", stacklevel=3)


def dropout2d(input: Tensor, p: float = 0.5, training: bool = True,
              inplace: bool = False) -> Tensor:
    """Zero whole channels of (N, C, H, W) input. Mirrors: ``torch.nn.functional.dropout2d``.

    As in PyTorch 2.13, other ranks only warn and every input is taken as batched: a 3-D input
    is (N, C, L) and a 2-D one (N, C), dropped element by element."""
    _check_p(p)
    if input.dim() not in (3, 4):
        _rank_warning("dropout2d", input.dim(), "2", "3D or 4D")
    if input.dim() == 3:
        warnings.warn(
            "dropout2d: Received a 3D input to dropout2d and assuming that channel-wise 1D "
            "dropout behavior is desired - input is interpreted as shape (N, C, L), where C is "
            "the channel dim. This behavior will change in a future release to interpret the "
            "input as one without a batch dimension, i.e. shape (C, H, W). To maintain the 1D "
            "channel-wise dropout behavior, please switch to using dropout1d instead.",
            stacklevel=2)
    return _feature_dropout(input, p, training, inplace)


def dropout3d(input: Tensor, p: float = 0.5, training: bool = True,
              inplace: bool = False) -> Tensor:
    """Zero whole channels of (N, C, D, H, W) or (C, D, H, W) input (other ranks warn, and are
    taken as unbatched). Mirrors: ``torch.nn.functional.dropout3d``."""
    _check_p(p)
    if input.dim() not in (4, 5):
        _rank_warning("dropout3d", input.dim(), "3", "4D or 5D")
    return _unbatched_feature_dropout(input, p, training, inplace, input.dim() == 5)


_ALPHA = 1.7580993408473766  # -SELU scale * alpha: the value dropped units take


def _alpha(input: Tensor, p: float, training: bool, shape: tuple) -> Tensor:
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if not training or p == 0.0:
        return input
    if p == 1.0:
        return input * 0.0
    keep = keep_noise(shape, 1.0 - p, input)
    a = 1.0 / math.sqrt((_ALPHA ** 2 * p + 1) * (1 - p))
    # PyTorch's order of operations: b = (noise - 1) * (alpha a) + alpha a p; noise *= a
    b = (keep - 1).mul_(_ALPHA * a).add_(_ALPHA * a * p)
    return input * keep.mul_(a) + b


def alpha_dropout(input: Tensor, p: float = 0.5, training: bool = False,
                  inplace: bool = False) -> Tensor:
    """Dropout keeping SELU's self-normalisation. Mirrors: ``torch.nn.functional.alpha_dropout``."""
    return _alpha(input, p, training, tuple(input.shape))


def feature_alpha_dropout(input: Tensor, p: float = 0.5, training: bool = False,
                          inplace: bool = False) -> Tensor:
    """Alpha dropout of whole channels. Mirrors: ``torch.nn.functional.feature_alpha_dropout``."""
    shape = tuple(input.shape[:2]) + (1,) * (input.dim() - 2)
    return _alpha(input, p, training, shape)


def _rrelu_slopes(input: Tensor, lower: float, upper: float) -> Tensor:
    """rrelu's training slopes drawn as PyTorch's kernel draws them (`_random_kernels`)."""
    values = _backend.to_numpy(input.detach()._data)
    slopes = rrelu_slopes(R._gen(None), values, lower, upper)
    return C.tensor(slopes, dtype=input.dtype)


def rrelu(input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3, training: bool = False,
          inplace: bool = False) -> Tensor:
    """Leaky ReLU with random slopes in training, their mean in eval. Mirrors: ``torch.nn.functional.rrelu``."""
    if training and R.VMAP_RANDOM[0] is not None:  # under vmap: the randomness mode decides
        slope = R.rand(*input.shape, dtype=input.dtype) * (upper - lower) + lower
    elif training:
        slope = _rrelu_slopes(input, lower, upper)
    else:
        slope = (lower + upper) / 2.0
        if not inplace and input.dtype.is_floating_point:  # ATen's node, noise buffer and all
            noise = C.empty(tuple(input.shape), dtype=input.dtype, device=input.device)
            return bind(PRIMITIVES["rrelu_with_noise_eval"], (input, noise),
                        {"negative_slope": slope})
    out = P.where(input >= 0, input, input * slope)
    return input.copy_(out) if inplace else out


def rrelu_(input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3,
           training: bool = False) -> Tensor:
    """In-place `rrelu`. Mirrors: ``torch.nn.functional.rrelu_``."""
    return rrelu(input, lower, upper, training, inplace=True)


def gumbel_softmax(logits: Tensor, tau: float = 1, hard: bool = False, eps: float = 1e-10,
                   dim: int = -1) -> Tensor:
    """Softmax of Gumbel-perturbed logits; `hard` gives straight-through one-hot samples.

    Mirrors: ``torch.nn.functional.gumbel_softmax``.
    """
    from hookgrad._functional import nn_ops as N
    # PyTorch's draw: -log(Exponential(1)) ~ Gumbel(0, 1), filled contiguous
    # a contiguous noise tensor; under vmap one like `logits`, batched as it is
    noise = (C.empty_like(logits) if R.VMAP_RANDOM[0] is not None
             else C.empty(tuple(logits.shape), dtype=logits.dtype))
    gumbels = -P.log(R.exponential_(noise))
    y_soft = N.softmax((logits + gumbels) / tau, dim)
    if not hard:
        return y_soft
    index = y_soft.argmax(dim, keepdim=True)
    y_hard = C.zeros_like(logits).scatter(dim, index, 1.0)
    return y_hard - y_soft.detach() + y_soft
