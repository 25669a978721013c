"""More layers of `hookgrad.nn.functional`: 3-d convolution and pooling, adaptive max pooling,
max unpooling, instance norm, and the distance/normalization composites.

Each is built as PyTorch builds it, so ``grad_fn`` chains match: primitives where PyTorch shows
one node (``AdaptiveMaxPool2DBackward0``, ``MaxUnpool2DBackward0``...), PyTorch's composites
otherwise (``adaptive_max_pool1d`` is ``unsqueeze`` + the 2-d op + ``squeeze``; ``instance_norm``
is ``batch_norm`` of a ``[1, N*C, ...]`` view; ``cosine_similarity`` divides by clamped norms).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from hookgrad._ops._checks import tensor_arguments
from hookgrad._ops._shapes import broadcast_shapes
from hookgrad._dispatch import bind
from hookgrad._functional.shape import broadcast_to
from hookgrad._ops import layers as _L
from hookgrad._ops import pool3d as _P3
from hookgrad._ops.conv import conv
from hookgrad._ops.registry import PRIMITIVES as _PRIMS
from hookgrad._tensor import Tensor
from hookgrad.autograd.grad_mode import no_grad
from hookgrad.nn._functional_conv import _conv_nd, _conv_transpose_nd, ntuple
from hookgrad.nn._functional_norm import batch_norm

__all__ = [
    "conv3d", "conv_transpose3d", "max_pool3d", "max_pool3d_with_indices", "avg_pool3d",
    "adaptive_avg_pool3d", "adaptive_max_pool1d", "adaptive_max_pool2d", "adaptive_max_pool3d",
    "adaptive_max_pool1d_with_indices", "adaptive_max_pool2d_with_indices",
    "adaptive_max_pool3d_with_indices", "max_unpool1d", "max_unpool2d", "max_unpool3d",
    "instance_norm", "normalize", "cosine_similarity", "pairwise_distance",
]
IntOrSeq = int | Sequence[int]
_ = conv  # the convolution primitive backs conv3d through _conv_nd


@tensor_arguments
def conv3d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride: IntOrSeq = 1,
           padding: IntOrSeq | str = 0, dilation: IntOrSeq = 1, groups: int = 1) -> Tensor:
    """3-d cross-correlation of ``[N, C_in, D, H, W]`` by ``[C_out, C_in/groups, KD, KH, KW]``.

    Mirrors: ``torch.nn.functional.conv3d``.
    """
    return _conv_nd(input, weight, bias, stride, padding, dilation, groups, 3)


def conv_transpose3d(input: Tensor, weight: Tensor, bias: Tensor | None = None,
                     stride: IntOrSeq = 1, padding: IntOrSeq = 0, output_padding: IntOrSeq = 0,
                     groups: int = 1, dilation: IntOrSeq = 1) -> Tensor:
    """3-d transposed convolution; weight ``[C_in, C_out/groups, KD, KH, KW]``.

    Mirrors: ``torch.nn.functional.conv_transpose3d``.
    """
    return _conv_transpose_nd(input, weight, bias, stride, padding, output_padding, groups,
                              dilation, 3)


def _check5(input: Tensor, name: str) -> None:
    if input.dim() not in (4, 5):
        raise RuntimeError(f"{name}: Expected 4D or 5D tensor for input, but got "
                           f"{list(input.shape)}" if name.startswith("adaptive") else
                           "non-empty 4D or 5D (batch mode) tensor expected for input")


def _check_pool3d(input: Tensor, k: tuple, s: tuple, p: tuple, d: tuple, ceil_mode: bool,
                  avg: bool = False) -> None:
    """PyTorch's ``pool3d_shape_check`` messages (average pooling also wants the unpadded input
    at least as large as the kernel)."""
    for kk, pp, dd in zip(k, p, d):
        if pp > ((kk - 1) * dd + 1) // 2:
            raise RuntimeError("pad should be at most half of effective kernel size, but got "
                               f"pad={pp}, kernel_size={kk} and dilation={dd}")
    t, h, w = tuple(input.shape)[-3:]
    if avg and (t < k[0] or h < k[1] or w < k[2]):
        raise RuntimeError(f"input image (T: {t} H: {h} W: {w}) smaller than kernel size (kT: "
                           f"{k[0]} kH: {k[1]} kW: {k[2]})")
    outs = _P3.out_sizes(tuple(input.shape), k, s, p, d, ceil_mode)
    if min(outs) < 1:
        c = input.size(-4)
        raise RuntimeError(f"Given input size: ({c}x{t}x{h}x{w}). Calculated output size: "
                           f"({c}x{outs[0]}x{outs[1]}x{outs[2]}). Output size is too small")


def max_pool3d(input: Tensor, kernel_size: IntOrSeq, stride: IntOrSeq | None = None,
               padding: IntOrSeq = 0, dilation: IntOrSeq = 1, ceil_mode: bool = False,
               return_indices: bool = False) -> Any:
    """Maximum over 3-d windows of ``[N, C, D, H, W]`` (``MaxPool3DWithIndicesBackward0``).

    Raises:
        RuntimeError: on a bad rank, too much padding or an empty output.

    Mirrors: ``torch.nn.functional.max_pool3d``.
    """
    _check5(input, "max_pool3d")
    k = ntuple(kernel_size, 3)
    s = k if stride is None or stride == [] or stride == () else ntuple(stride, 3)
    p, d = ntuple(padding, 3), ntuple(dilation, 3)
    _check_pool3d(input, k, s, p, d, ceil_mode)
    out, idx = bind(_P3.MAX_POOL3D, (input,), {"kernel_size": k, "stride": s, "padding": p,
                                               "dilation": d, "ceil_mode": ceil_mode})
    return (out, idx) if return_indices else out


def max_pool3d_with_indices(input: Tensor, kernel_size: IntOrSeq, stride: Any = None,
                            padding: IntOrSeq = 0, dilation: IntOrSeq = 1,
                            ceil_mode: bool = False, return_indices: bool = True) -> Any:
    """`max_pool3d` returning ``(values, indices)``.

    Mirrors: ``torch.nn.functional.max_pool3d_with_indices``.
    """
    return max_pool3d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def avg_pool3d(input: Tensor, kernel_size: IntOrSeq, stride: IntOrSeq | None = None,
               padding: IntOrSeq = 0, ceil_mode: bool = False, count_include_pad: bool = True,
               divisor_override: int | None = None) -> Tensor:
    """Average over 3-d windows (``AvgPool3DBackward0``).

    Raises:
        RuntimeError: on a bad rank or too much padding.

    Mirrors: ``torch.nn.functional.avg_pool3d``.
    """
    _check5(input, "avg_pool3d")
    k = ntuple(kernel_size, 3)
    s = k if stride is None or stride == [] or stride == () else ntuple(stride, 3)
    p = ntuple(padding, 3)
    _check_pool3d(input, k, s, p, (1, 1, 1), ceil_mode, avg=True)
    return bind(_P3.AVG_POOL3D, (input,), {
        "kernel_size": k, "stride": s, "padding": p, "ceil_mode": ceil_mode,
        "count_include_pad": count_include_pad, "divisor_override": divisor_override})


def _out_size(input: Tensor, output_size: Any, nd: int) -> tuple[int, ...]:
    size = (output_size,) * nd if isinstance(output_size, int) else tuple(output_size)
    return tuple(input.size(-nd + i) if v is None else int(v) for i, v in enumerate(size))


def adaptive_avg_pool3d(input: Tensor, output_size: Any) -> Tensor:
    """Adaptive average pooling of ``[N, C, D, H, W]``; ``1x1x1`` is a mean (as in ATen).

    Mirrors: ``torch.nn.functional.adaptive_avg_pool3d``.
    """
    _check5(input, "adaptive_avg_pool3d()")
    size = _out_size(input, output_size, 3)
    if size == (1, 1, 1):
        return input.mean((-1, -2, -3), True)  # type: ignore[attr-defined]
    return bind(_L.ADAPTIVE_AVG_POOL3D, (input,), {"output_size": size})


def adaptive_max_pool2d(input: Tensor, output_size: Any, return_indices: bool = False) -> Any:
    """Adaptive max pooling of ``[N, C, H, W]`` (``AdaptiveMaxPool2DBackward0``).

    Raises:
        RuntimeError: on a bad rank.

    Mirrors: ``torch.nn.functional.adaptive_max_pool2d``.
    """
    if input.dim() not in (3, 4):
        raise RuntimeError("adaptive_max_pool2d(): Expected 3D or 4D tensor, but got: "
                           f"{list(input.shape)}")
    out, idx = bind(_L.ADAPTIVE_MAX_POOL2D, (input,),
                    {"output_size": _out_size(input, output_size, 2)})
    return (out, idx) if return_indices else out


def adaptive_max_pool3d(input: Tensor, output_size: Any, return_indices: bool = False) -> Any:
    """Adaptive max pooling of ``[N, C, D, H, W]`` (``AdaptiveMaxPool3DBackward0``).

    Mirrors: ``torch.nn.functional.adaptive_max_pool3d``.
    """
    if input.dim() not in (4, 5):
        raise RuntimeError("adaptive_max_pool3d(): Expected 4D or 5D tensor, but got: "
                           f"{list(input.shape)}")
    out, idx = bind(_L.ADAPTIVE_MAX_POOL3D, (input,),
                    {"output_size": _out_size(input, output_size, 3)})
    return (out, idx) if return_indices else out


def adaptive_max_pool1d(input: Tensor, output_size: Any, return_indices: bool = False) -> Any:
    """``unsqueeze(-2)``, `adaptive_max_pool2d`, ``squeeze(-2)`` (PyTorch's composite).

    Mirrors: ``torch.nn.functional.adaptive_max_pool1d``.
    """
    if input.dim() not in (2, 3):
        raise RuntimeError("adaptive_max_pool1d(): Expected 2D or 3D tensor, but got: "
                           f"{list(input.shape)}")
    if not isinstance(output_size, int) and len(output_size) != 1:
        raise RuntimeError(f"adaptive_max_pool1d() argument 'output_size' should contain one "
                           f"int (got {len(output_size)})")
    size = output_size if isinstance(output_size, int) else output_size[0]
    out, idx = adaptive_max_pool2d(input.unsqueeze(-2), (1, size), True)  # type: ignore
    out, idx = out.squeeze(-2), idx.squeeze(-2)
    return (out, idx) if return_indices else out


def adaptive_max_pool1d_with_indices(input: Tensor, output_size: Any,
                                     return_indices: bool = True) -> Any:
    """Mirrors: ``torch.nn.functional.adaptive_max_pool1d_with_indices``."""
    return adaptive_max_pool1d(input, output_size, True)


def adaptive_max_pool2d_with_indices(input: Tensor, output_size: Any,
                                     return_indices: bool = True) -> Any:
    """Mirrors: ``torch.nn.functional.adaptive_max_pool2d_with_indices``."""
    return adaptive_max_pool2d(input, output_size, True)


def adaptive_max_pool3d_with_indices(input: Tensor, output_size: Any,
                                     return_indices: bool = True) -> Any:
    """Mirrors: ``torch.nn.functional.adaptive_max_pool3d_with_indices``."""
    return adaptive_max_pool3d(input, output_size, True)


def _unpool_size(input: Tensor, k: tuple, s: tuple, p: tuple, output_size: Any) -> tuple:
    nd = len(k)
    default = tuple((input.size(-nd + i) - 1) * s[i] + k[i] - 2 * p[i] for i in range(nd))
    if output_size is None:
        return default
    size = tuple(int(v) for v in output_size)
    size = size[-nd:] if len(size) == nd + 2 or len(size) == nd + 1 else size
    if len(size) != nd:
        raise ValueError(f"output_size should be a sequence containing {nd} or {nd + 2} "
                         f"elements, but it has a length of '{len(output_size)}'")
    for i in range(nd):
        lo, hi = default[i] - s[i], default[i] + s[i]
        if not lo < size[i] < hi:
            raise ValueError(f'invalid output_size "{size}" (dim {i} must be between {lo} and '
                             f"{hi})")
    return size


def _max_unpool(input: Tensor, indices: Tensor, nd: int, kernel_size: Any, stride: Any,
                padding: Any, output_size: Any) -> Tensor:
    k = ntuple(kernel_size, nd)
    s = k if stride is None else ntuple(stride, nd)
    size = _unpool_size(input, k, s, ntuple(padding, nd), output_size)
    # the primitive checks the indices against the output volume
    return bind(_L.MAX_UNPOOL[nd], (input, indices), {"output_size": size})


def max_unpool2d(input: Tensor, indices: Tensor, kernel_size: IntOrSeq,
                 stride: IntOrSeq | None = None, padding: IntOrSeq = 0,
                 output_size: Any = None) -> Tensor:
    """The partial inverse of `max_pool2d`: values written at `indices`, zeros elsewhere.

    Raises:
        RuntimeError: on an index outside the output plane.

    Mirrors: ``torch.nn.functional.max_unpool2d``.
    """
    return _max_unpool(input, indices, 2, kernel_size, stride, padding, output_size)


def max_unpool3d(input: Tensor, indices: Tensor, kernel_size: IntOrSeq,
                 stride: IntOrSeq | None = None, padding: IntOrSeq = 0,
                 output_size: Any = None) -> Tensor:
    """The partial inverse of `max_pool3d` (``MaxUnpool3DBackward0``).

    Mirrors: ``torch.nn.functional.max_unpool3d``.
    """
    return _max_unpool(input, indices, 3, kernel_size, stride, padding, output_size)


def max_unpool1d(input: Tensor, indices: Tensor, kernel_size: IntOrSeq,
                 stride: IntOrSeq | None = None, padding: IntOrSeq = 0,
                 output_size: Any = None) -> Tensor:
    """``max_unpool2d`` of an ``unsqueeze(-1)`` view, squeezed back (PyTorch's composite).

    Mirrors: ``torch.nn.functional.max_unpool1d``.
    """
    k = ntuple(kernel_size, 1)
    s = k if stride is None else ntuple(stride, 1)
    p = ntuple(padding, 1)
    size = _unpool_size(input, k, s, p, output_size)
    out = _max_unpool(input.unsqueeze(-1), indices.unsqueeze(-1), 2,  # type: ignore
                      (k[0], 1), (s[0], 1), (p[0], 0), (size[0], 1))
    return out.squeeze(-1)  # type: ignore[attr-defined]


def instance_norm(input: Tensor, running_mean: Tensor | None = None,
                  running_var: Tensor | None = None, weight: Tensor | None = None,
                  bias: Tensor | None = None, use_input_stats: bool = True,
                  momentum: float = 0.1, eps: float = 1e-5) -> Tensor:
    """Normalize each (sample, channel) plane over its spatial dims.

    As ATen: `batch_norm` of the ``[1, N*C, *]`` view with weight, bias and running stats
    repeated ``N`` times; the running stats become the mean of the per-sample updates.

    Raises:
        ValueError: in training mode with a single spatial element.

    Mirrors: ``torch.nn.functional.instance_norm``.
    """
    shape = tuple(input.shape)
    if use_input_stats:
        size = 1
        for n in shape[2:]:
            size *= n
        if size == 1:
            raise ValueError("Expected more than 1 spatial element when training, got input "
                             f"size {input.size()}")
    b, c = shape[0], shape[1]
    x = input.contiguous().view(1, b * c, *shape[2:])  # type: ignore[attr-defined]

    def rep(t: Tensor | None) -> Tensor | None:
        return None if t is None else t.repeat(b)  # type: ignore[attr-defined]

    rm, rv = rep(running_mean), rep(running_var)
    out = batch_norm(x, rm, rv, rep(weight), rep(bias), use_input_stats, momentum, eps)
    with no_grad():
        for buf, rep_buf in ((running_mean, rm), (running_var, rv)):
            if buf is not None and rep_buf is not None:
                buf.copy_(rep_buf.view(b, c).mean(0))  # type: ignore[attr-defined]
    return out.view(shape)  # type: ignore[attr-defined]


def normalize(input: Tensor, p: float = 2.0, dim: int = 1, eps: float = 1e-12,
              out: Tensor | None = None) -> Tensor:
    """``input / max(||input||_p, eps)`` along `dim` (``DivBackward0``).

    Mirrors: ``torch.nn.functional.normalize``.
    """
    denom = input.norm(p, dim, keepdim=True).clamp_min(eps).expand_as(input)  # type: ignore
    if out is not None:
        return out.copy_(input / denom)  # type: ignore[attr-defined]
    return input / denom  # type: ignore[operator]


def cosine_similarity(x1: Tensor, x2: Tensor, dim: int = 1, eps: float = 1e-8) -> Tensor:
    """``sum(x1/||x1|| * x2/||x2||, dim)`` with norms clamped to `eps` (``SumBackward1``).

    As ATen: each norm is cloned and clamped in place under ``no_grad``, so the clamp adds no
    node and the gradient flows as if the norm were not clamped.

    Mirrors: ``torch.nn.functional.cosine_similarity``.
    """
    if tuple(x1.shape) != tuple(x2.shape):
        shape = broadcast_shapes(tuple(x1.shape), tuple(x2.shape))  # PyTorch's RuntimeError
        x1, x2 = broadcast_to(x1, shape), broadcast_to(x2, shape)
    n1 = x1.norm(2, dim, keepdim=True).clone()  # type: ignore[attr-defined]
    n2 = x2.norm(2, dim, keepdim=True).clone()  # type: ignore[attr-defined]
    with no_grad():
        n1.clamp_min_(eps)  # type: ignore[attr-defined]
        n2.clamp_min_(eps)  # type: ignore[attr-defined]
    return ((x1 / n1) * (x2 / n2)).sum(dim)  # type: ignore[operator]


def pairwise_distance(x1: Tensor, x2: Tensor, p: float = 2.0, eps: float = 1e-6,
                      keepdim: bool = False) -> Tensor:
    """``||x1 - x2 + eps||_p`` over the last dim (``NormBackward1``).

    Mirrors: ``torch.nn.functional.pairwise_distance``.
    """
    diff = bind(_PRIMS["_nn_add_scalar"], (x1 - x2,), {"other": eps})  # type: ignore[operator]
    ndim = max(x1.dim(), x2.dim())
    dim = (ndim - 1,) if ndim else ()
    return bind(_L.NORM, (diff,), {"p": p, "dim": dim, "keepdim": keepdim})
