"""Pooling of `hookgrad.nn.functional`: max, average and adaptive average pooling (1-d, 2-d).

The 2-d ops bind their primitives (``MaxPool2DWithIndicesBackward0``, ``AvgPool2DBackward0``,
``AdaptiveAvgPool2DBackward0``); the 1-d ops are PyTorch's composites around them
(``unsqueeze(-2)``, the 2-d op, ``squeeze(-2)``), and an adaptive pool to ``1 x 1`` is a mean, as
in ATen. Argument checks raise PyTorch's exception types and messages.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from hookgrad._ops._checks import tensor_arguments
from hookgrad._backend import namespace_of
from hookgrad._config import STATE
from hookgrad._dispatch import bind
from hookgrad._ops import pooling as _P
from hookgrad._ops._pool_kernels import pool_out_size
from hookgrad._tensor import Tensor
from hookgrad.nn._functional_conv import ntuple

__all__ = [
    "max_pool1d",
    "max_pool2d",
    "max_pool1d_with_indices",
    "max_pool2d_with_indices",
    "avg_pool1d",
    "avg_pool2d",
    "adaptive_avg_pool1d",
    "adaptive_avg_pool2d",
]

IntOrSeq = int | Sequence[int]


def _check_input(input: Tensor) -> None:
    if input.dim() not in (3, 4) or 0 in tuple(input.shape)[-3:]:
        raise RuntimeError("non-empty 3D or 4D (batch mode) tensor expected for input")


def _check_pool(
    input: Tensor,
    k: Sequence[int],
    s: Sequence[int],
    p: Sequence[int],
    d: Sequence[int],
    ceil_mode: bool,
) -> None:
    """PyTorch's checks in its order: ``pooling_output_shape`` per dim (zero stride, negative
    padding, padding over half the window), then ``pool2d_shape_check``."""
    for kk, ss, pp, dd in zip(k, s, p, d, strict=True):
        if ss == 0:
            raise RuntimeError("stride should not be zero")
        if pp < 0:
            raise RuntimeError(f"pad must be non-negative, but got pad: {pp}")
        span = (kk - 1) * dd + 1
        if pp > int(span / 2):  # C++ integer division truncates toward zero
            raise RuntimeError(
                "pad should be at most half of effective kernel size, but got "
                f"pad={pp}, kernel_size={kk} and dilation={dd}"
            )
    if min(k) <= 0:
        raise RuntimeError(
            f"kernel size should be greater than zero, but got kH: {k[0]} kW: {k[1]}"
        )
    if min(s) <= 0:
        raise RuntimeError(f"stride should be greater than zero, but got dH: {s[0]} dW: {s[1]}")
    if min(d) <= 0:
        raise RuntimeError(
            f"dilation should be greater than zero, but got dilationH: {d[0]} dilationW: {d[1]}"
        )
    if p[1] > k[1] // 2 or p[0] > k[0] // 2:  # without dilation, unlike the check above
        raise RuntimeError(
            "pad should be smaller than or equal to half of kernel size, but got "
            f"padW = {p[1]}, padH = {p[0]}, kW = {k[1]}, kH = {k[0]}"
        )
    h, w = input.shape[-2:]
    oh = pool_out_size(h, k[0], s[0], p[0], d[0], ceil_mode)
    ow = pool_out_size(w, k[1], s[1], p[1], d[1], ceil_mode)
    if oh < 1 or ow < 1:
        c = input.size(-3)
        raise RuntimeError(
            f"Given input size: ({c}x{h}x{w}). Calculated output size: ({c}x{oh}x{ow}). "
            "Output size is too small"
        )


def _stride(stride: IntOrSeq | None, kernel: tuple[int, ...], n: int,
            fn: str = "") -> tuple[int, ...]:
    if stride is None or (not isinstance(stride, int) and len(stride) == 0):
        return kernel
    return _pair(stride, n, fn, "stride")


def _pair(value: Any, n: int, fn: str, name: str) -> tuple[int, ...]:
    """`ntuple` with PyTorch's check that a 2-d pool argument is one int or two."""
    if not isinstance(value, (int, Sequence)) or isinstance(value, (bool, str)):
        raise TypeError(f"{fn}(): argument '{name}' must be tuple of ints, not "
                        f"{type(value).__name__}")
    out = ntuple(value, n)
    if len(out) != n:
        what = "a single int, or a tuple of two ints" if n == 2 else "a single int"
        raise RuntimeError(f"{fn}: {name} must either be {what}")
    return out


@tensor_arguments
def max_pool2d(
    input: Tensor,
    kernel_size: IntOrSeq,
    stride: IntOrSeq | None = None,
    padding: IntOrSeq = 0,
    dilation: IntOrSeq = 1,
    ceil_mode: bool = False,
    return_indices: bool = False,
) -> Any:
    """Maximum over ``kernel_size`` windows of ``[N, C, H, W]`` (or ``[C, H, W]``).

    Ties pick the first maximum of a window in row-major order, so gradients match PyTorch's.

    Args:
        input: the input.
        kernel_size: window size (int or pair).
        stride: window step (default: `kernel_size`).
        padding: implicit ``-inf`` padding on both sides, at most half the window.
        dilation: spacing between window elements.
        ceil_mode: round the output size up (the last window may hang over the edge).
        return_indices: also return the flat per-plane argmax indices (``int64``).

    Returns:
        The pooled tensor (``MaxPool2DWithIndicesBackward0``), or ``(values, indices)``.

    Raises:
        RuntimeError: on a bad rank, non-positive sizes, too much padding or an empty output.

    Example:
        >>> import hookgrad as torch
        >>> x = torch.arange(16.0).reshape(1, 1, 4, 4)
        >>> torch.nn.functional.max_pool2d(x, 2).tolist()
        [[[[5.0, 7.0], [13.0, 15.0]]]]

    Mirrors: ``torch.nn.functional.max_pool2d``.
    """
    _check_input(input)
    k = _pair(kernel_size, 2, "max_pool2d", "kernel_size")
    s, p = _stride(stride, k, 2, "max_pool2d"), _pair(padding, 2, "max_pool2d", "padding")
    d = _pair(dilation, 2, "max_pool2d", "dilation")
    _check_pool(input, k, s, p, d, ceil_mode)
    out, idx = bind(
        _P.MAX_POOL2D,
        (input,),
        {"kernel_size": k, "stride": s, "padding": p, "dilation": d, "ceil_mode": ceil_mode},
    )
    return (out, idx) if return_indices else out


@tensor_arguments
def max_pool1d(
    input: Tensor,
    kernel_size: IntOrSeq,
    stride: IntOrSeq | None = None,
    padding: IntOrSeq = 0,
    dilation: IntOrSeq = 1,
    ceil_mode: bool = False,
    return_indices: bool = False,
) -> Any:
    """Maximum over windows of ``[N, C, L]`` (or ``[C, L]``): PyTorch's composite of
    ``unsqueeze(-2)``, 2-d max pooling and ``squeeze(-2)``.

    Returns:
        The pooled tensor, or ``(values, indices)`` with `return_indices`.

    Raises:
        RuntimeError: on a bad rank or non-positive sizes (PyTorch's ``max_pool1d()`` texts).

    Mirrors: ``torch.nn.functional.max_pool1d``.
    """
    if input.dim() not in (2, 3):
        raise RuntimeError(
            f"max_pool1d() Expected 2D or 3D input tensor, but got {list(input.shape)}"
        )
    if not input.is_floating_point():
        raise NotImplementedError(
            f"\"max_pool1d_impl\" not implemented for '{input.dtype.scalar_type}'")
    k = ntuple(kernel_size, 1)
    s, p, d = _stride(stride, k, 1), ntuple(padding, 1), ntuple(dilation, 1)
    for name, v, low in (
        ("kernel_size", k, 1),
        ("stride", s, 1),
        ("padding", p, 0),
        ("dilation", d, 1),
    ):
        if v[0] < low:
            word = "greater than zero" if low else "non-negative"
            raise RuntimeError(f"max_pool1d() {name} must be {word}, but got {v[0]}")
    out, idx = max_pool2d(
        input.unsqueeze(-2),
        (1, k[0]),
        (1, s[0]),
        (0, p[0]),  # type: ignore
        (1, d[0]),
        ceil_mode,
        True,
    )
    if not return_indices and not (input.requires_grad and STATE.grad_enabled) \
            and not STATE.stack:
        # PyTorch's max_pool1d_impl: without a gradient to compute (and without indices, a
        # forward-AD tangent, a trace or vmap: any recorder above grad mode's) the result is a
        # fresh tensor, not a view of the 2-d pooling's output
        # (row-major: its own kernel's output, whatever layout the 2-d pooling chose)
        data = out._data.reshape(out._data.shape[:-2] + out._data.shape[-1:])
        return Tensor._make(namespace_of(data).ascontiguousarray(data))
    out = out.squeeze(-2)
    return (out, idx.squeeze(-2)) if return_indices else out


def avg_pool2d(
    input: Tensor,
    kernel_size: IntOrSeq,
    stride: IntOrSeq | None = None,
    padding: IntOrSeq = 0,
    ceil_mode: bool = False,
    count_include_pad: bool = True,
    divisor_override: int | None = None,
) -> Tensor:
    """Mean over ``kernel_size`` windows of ``[N, C, H, W]`` (or ``[C, H, W]``).

    Args:
        input: the input.
        kernel_size: window size.
        stride: window step (default: `kernel_size`).
        padding: implicit zero padding, at most half the window.
        ceil_mode: round the output size up.
        count_include_pad: count padded zeros in the divisor.
        divisor_override: divide every window sum by this instead.

    Returns:
        The pooled tensor (``AvgPool2DBackward0``).

    Raises:
        RuntimeError: on bad sizes or a zero `divisor_override`.

    Example:
        >>> import hookgrad as torch
        >>> torch.nn.functional.avg_pool2d(torch.ones(1, 1, 4, 4), 2).shape
        torch.Size([1, 1, 2, 2])

    Mirrors: ``torch.nn.functional.avg_pool2d``.
    """
    if isinstance(input, Tensor) and input.dim() < 3:  # PyTorch reads size(-3) first
        if input.dim() == 0:
            raise IndexError("Dimension specified as -3 but tensor has no dimensions")
        raise IndexError("Dimension out of range (expected to be in range of "
                         f"[{-input.dim()}, {input.dim() - 1}], but got -3)")
    _check_input(input)
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    k = _pair(kernel_size, 2, "avg_pool2d", "kernel_size")
    s, p = _stride(stride, k, 2, "avg_pool2d"), _pair(padding, 2, "avg_pool2d", "padding")
    _check_pool(input, k, s, p, (1, 1), ceil_mode)
    return bind(
        _P.AVG_POOL2D,
        (input,),
        {
            "kernel_size": k,
            "stride": s,
            "padding": p,
            "ceil_mode": ceil_mode,
            "count_include_pad": count_include_pad,
            "divisor_override": divisor_override,
        },
    )


@tensor_arguments
def avg_pool1d(
    input: Tensor,
    kernel_size: IntOrSeq,
    stride: IntOrSeq | None = None,
    padding: IntOrSeq = 0,
    ceil_mode: bool = False,
    count_include_pad: bool = True,
) -> Tensor:
    """Mean over windows of ``[N, C, L]`` (or ``[C, L]``): ``unsqueeze(-2)``, 2-d average
    pooling, ``squeeze(-2)``.

    Raises:
        RuntimeError: on a bad rank or bad sizes.

    Mirrors: ``torch.nn.functional.avg_pool1d``.
    """
    if input.dim() not in (2, 3):
        raise RuntimeError(
            f"avg_pool1d() argument 'input' must be 2D or 3D, but got {input.dim()}D"
        )
    k = ntuple(kernel_size, 1)
    s, p = _stride(stride, k, 1), ntuple(padding, 1)
    out = avg_pool2d(
        input.unsqueeze(-2),
        (1, k[0]),
        (1, s[0]),
        (0, p[0]),  # type: ignore
        ceil_mode,
        count_include_pad,
    )
    return out.squeeze(-2)  # type: ignore[attr-defined]


def _adaptive_size(input: Tensor, output_size: Any, fn: str) -> tuple[int, ...]:
    size = (output_size, output_size) if isinstance(output_size, int) else output_size
    if not isinstance(size, Sequence) or isinstance(size, str) or not all(
            v is None or (isinstance(v, int) and not isinstance(v, bool)) for v in size):
        bad = size if not isinstance(size, Sequence) or isinstance(size, str) else next(
            v for v in size if not isinstance(v, int))
        raise TypeError(f"{fn}(): argument 'output_size' (position 2) must be tuple of ints, "
                        f"not {type(bad).__name__}")
    if len(size) != 2:
        raise RuntimeError(f"{fn}: output_size must be 2")
    size = tuple(input.size(-2 + i) if v is None else v for i, v in enumerate(size))
    if min(size) < 0:
        raise RuntimeError(f"{fn}: elements of output_size must be greater than or equal to 0 "
                           f"but received {{{size[0]}, {size[1]}}}")
    return size


def adaptive_avg_pool2d(input: Tensor, output_size: Any) -> Tensor:
    """Average pooling to a fixed ``output_size`` whatever the input size.

    Output cell ``i`` averages input rows ``floor(i*H/OH)`` to ``ceil((i+1)*H/OH)`` (windows
    overlap when the sizes do not divide). ``None`` in `output_size` keeps that input size;
    ``1 x 1`` is computed as a mean over the last two dims (``MeanBackward1``), as PyTorch does.

    Returns:
        ``[..., OH, OW]`` (``AdaptiveAvgPool2DBackward0``).

    Raises:
        RuntimeError: on a bad rank.

    Example:
        >>> import hookgrad as torch
        >>> torch.nn.functional.adaptive_avg_pool2d(torch.ones(1, 3, 5, 7), (2, 3)).shape
        torch.Size([1, 3, 2, 3])

    Mirrors: ``torch.nn.functional.adaptive_avg_pool2d``.
    """
    if isinstance(input, Tensor) and (input._data.dtype.kind in "iubc"):
        raise NotImplementedError(
            f"\"adaptive_avg_pool2d\" not implemented for '{input.dtype.scalar_type}'")
    if input.dim() not in (3, 4):
        raise RuntimeError(
            f"adaptive_avg_pool2d(): Expected 3D or 4D tensor, but got {list(input.shape)}"
        )
    for k in range(1, input.dim()):  # the non-batch dims (all but the first)
        if input.shape[k] == 0:
            raise RuntimeError(
                "adaptive_avg_pool2d(): Expected input to have non-zero size for non-batch "
                f"dimensions, but input has sizes {list(input.shape)} with dimension {k} "
                "being empty")
    size = _adaptive_size(input, output_size, "adaptive_avg_pool2d")
    if size == (1, 1):
        return input.mean((-1, -2), True)  # type: ignore[attr-defined]
    return bind(_P.ADAPTIVE_AVG_POOL2D, (input,), {"output_size": size})


def adaptive_avg_pool1d(input: Tensor, output_size: Any) -> Tensor:
    """Adaptive average pooling of ``[N, C, L]`` (or ``[C, L]``) to ``output_size``.

    Raises:
        RuntimeError: on a bad rank.

    Mirrors: ``torch.nn.functional.adaptive_avg_pool1d``.
    """
    if input.dim() not in (2, 3):
        raise RuntimeError(
            f"adaptive_avg_pool1d(): Expected 2D or 3D tensor, but got {list(input.shape)}"
        )
    size = output_size if isinstance(output_size, int) else output_size[0]
    out = adaptive_avg_pool2d(input.unsqueeze(-2), (1, size))  # type: ignore[attr-defined]
    return out.squeeze(-2)  # type: ignore[attr-defined]


def max_pool2d_with_indices(
    input: Tensor,
    kernel_size: IntOrSeq,
    stride: IntOrSeq | None = None,
    padding: IntOrSeq = 0,
    dilation: IntOrSeq = 1,
    ceil_mode: bool = False,
    return_indices: bool = True,
) -> Any:
    """`max_pool2d` returning ``(values, indices)``.

    Mirrors: ``torch.nn.functional.max_pool2d_with_indices``.
    """
    return max_pool2d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def max_pool1d_with_indices(
    input: Tensor,
    kernel_size: IntOrSeq,
    stride: IntOrSeq | None = None,
    padding: IntOrSeq = 0,
    dilation: IntOrSeq = 1,
    ceil_mode: bool = False,
    return_indices: bool = True,
) -> Any:
    """`max_pool1d` returning ``(values, indices)``.

    Mirrors: ``torch.nn.functional.max_pool1d_with_indices``.
    """
    return max_pool1d(input, kernel_size, stride, padding, dilation, ceil_mode, True)
