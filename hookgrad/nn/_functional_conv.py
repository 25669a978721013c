"""Convolutions of `hookgrad.nn.functional`: ``conv1d``, ``conv2d``, ``conv_transpose1d``,
``conv_transpose2d``.

All of them bind the single ``convolution`` primitive (``ConvolutionBackward0``), as PyTorch's
ATen does; unbatched inputs go through ``unsqueeze(0)``/``squeeze(0)`` like PyTorch's, so the
graph has the same nodes. Argument checks raise PyTorch's exception types and messages.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

from hookgrad._ops._checks import tensor_arguments
from hookgrad._functional.rearrange import pad as _pad
from hookgrad._ops.conv import conv
from hookgrad._tensor import Tensor

__all__ = ["conv1d", "conv2d", "conv_transpose1d", "conv_transpose2d"]

IntOrSeq = int | Sequence[int]
_warned_same = False


def ntuple(value: Any, n: int) -> tuple[int, ...]:
    """`value` repeated `n` times when it is an int (or a one-element sequence)."""
    if isinstance(value, int):
        return (value,) * n
    if isinstance(value, (str, bytes)) or any(isinstance(v, (str, bytes)) for v in value):
        raise TypeError(f"expected an int or a tuple of ints, but got {value!r}")  # as torch
    value = tuple(int(v) for v in value)
    return value * n if len(value) == 1 else value


def _int_arg(value: Any, name: str, fn: str) -> None:
    """PyTorch's argument parser: int-list arguments take ints only (TypeError otherwise)."""
    items = (value,) if isinstance(value, int) else value
    if isinstance(value, (str, bytes)) or not isinstance(value, (int, Sequence)) or not all(
            isinstance(v, int) and not isinstance(v, bool) for v in items):
        raise TypeError(f"{fn}() received an invalid combination of arguments - got "
                        f"{name}={type(value).__name__}, but expected a tuple of ints")


def conv_args(fn: str, nd: int, stride: Any, padding: Any, dilation: Any,
              groups: Any) -> tuple[tuple[int, ...], Any, tuple[int, ...]]:
    """Check and expand ``stride``/``padding``/``dilation``/``groups`` of a convolution, with
    PyTorch's exception types and texts, before any computation (so bad values can never reach
    the kernels as a division by zero or a NumPy pad error)."""
    values = {"stride": stride, "dilation": dilation}
    if not isinstance(padding, str):
        values["padding"] = padding
    out = {}
    for name, value in values.items():
        _int_arg(value, name, fn)
        full = ntuple(value, nd)
        if len(full) != nd:
            raise RuntimeError(f"expected {name} to be a single integer value or a list of {nd} "
                               "values to match the convolution dimensions, but got "
                               f"{name}={list(full)}")
        out[name] = full
    if not isinstance(groups, int) or isinstance(groups, bool):
        raise TypeError(f"{fn}() received an invalid combination of arguments - got "
                        f"groups={type(groups).__name__}, but expected int")
    if min(out["stride"]) <= 0:
        raise RuntimeError("non-positive stride is not supported")
    if "padding" in out and min(out["padding"]) < 0:
        raise RuntimeError("negative padding is not supported")
    if min(out["dilation"]) <= 0:
        raise RuntimeError(f"dilation should be greater than zero, but got {list(out['dilation'])}")
    return out["stride"], out.get("padding", padding), out["dilation"]


def _type_word(t: Tensor) -> str:
    return t.dtype.scalar_type


def _sizes(t: Tensor) -> str:
    return "[" + ", ".join(str(s) for s in t.shape) + "]"


def _batch(input: Tensor, nd: int, name: str) -> tuple[Tensor, bool]:
    """``(batched input, was it batched)``, PyTorch's rank check of ``conv{nd}d``."""
    if input.dim() not in (nd + 1, nd + 2):
        raise RuntimeError(
            f"Expected {nd + 1}D (unbatched) or {nd + 2}D (batched) input to {name}, but got "
            f"input of size: {_sizes(input)}"
        )
    if input.dim() == nd + 2:
        return input, True
    return input.unsqueeze(0), False  # type: ignore[attr-defined]


def _check(
    x: Tensor,
    weight: Tensor,
    bias: Tensor | None,
    padding: Sequence[int],
    dilation: Sequence[int],
    groups: int,
    transposed: bool,
) -> None:
    """PyTorch's ``check_shape_forward``: ranks, dtypes, channels, bias and kernel size."""
    if weight.dim() != x.dim():
        raise RuntimeError(
            f"Expected {weight.dim()}-dimensional input for {weight.dim()}-dimensional weight "
            f"{_sizes(weight)}, but got {x.dim()}-dimensional input of size {_sizes(x)} instead"
        )
    if x.dtype != weight.dtype:
        raise RuntimeError(f"expected scalar type {_type_word(x)} but found {_type_word(weight)}")
    if groups <= 0:
        raise RuntimeError("non-positive groups is not supported")
    w0 = weight.size(0)
    if w0 < groups:
        raise RuntimeError(f"Given groups={groups}, expected weight to be at least {groups} at "
                           f"dimension 0, but got weight of size {_sizes(weight)} instead")
    if w0 % groups:
        raise RuntimeError(
            f"Given groups={groups}, expected weight to be divisible by {groups} at dimension 0, "
            f"but got weight of size {_sizes(weight)} instead"
        )
    want = w0 if transposed else weight.size(1) * groups
    if x.size(1) != want:
        kind = "transposed=1" if transposed else f"groups={groups}"
        raise RuntimeError(
            f"Given {kind}, weight of size {_sizes(weight)}, expected input{_sizes(x)} to have "
            f"{want} channels, but got {x.size(1)} channels instead"
        )
    n_out = weight.size(1) * groups if transposed else w0
    if bias is not None and (bias.dim() != 1 or bias.size(0) != n_out):
        raise RuntimeError(
            f"Given weight of size {_sizes(weight)}, expected bias to be 1-dimensional with "
            f"{n_out} elements, but got bias of size {_sizes(bias)} instead"
        )
    if any(k <= 0 for k in weight.shape[2:]):
        names = ("kernel_depth", "kernel_height", "kernel_width")[-(weight.dim() - 2):]
        raise RuntimeError("kernel size should be greater than zero, but got " + " ".join(
            f"{n}: {k}" for n, k in zip(names, weight.shape[2:], strict=True)))
    if transposed:
        return
    spatial = [x.size(2 + i) + 2 * padding[i] for i in range(len(padding))]
    kernel = [(weight.size(2 + i) - 1) * dilation[i] + 1 for i in range(len(padding))]
    if any(s < k for s, k in zip(spatial, kernel, strict=True)):
        raise RuntimeError(
            f"Calculated padded input size per channel: ({' x '.join(map(str, spatial))}). "
            f"Kernel size: ({' x '.join(map(str, kernel))}). Kernel size can't be greater than "
            "actual input size"
        )


def _string_padding(
    x: Tensor, weight: Tensor, padding: str, stride: Sequence[int], dilation: Sequence[int]
) -> tuple[Tensor, tuple[int, ...]]:
    """PyTorch's ``padding='valid'|'same'``; an odd total padding pads the right explicitly."""
    nd = len(stride)
    if padding == "valid":
        return x, (0,) * nd
    if padding != "same":
        raise RuntimeError(f"Invalid padding string: '{padding}'")
    if any(s != 1 for s in stride):
        raise RuntimeError("padding='same' is not supported for strided convolutions")
    total = [dilation[i] * (weight.size(2 + i) - 1) for i in range(nd)]
    left = tuple(t // 2 for t in total)
    if all(t - lf == lf for t, lf in zip(total, left, strict=True)):
        return x, left
    _warn_same_once()
    extra = [0] * (2 * nd)
    for i in range(nd):  # F.pad lists the last dim first
        extra[2 * (nd - 1 - i) + 1] = total[i] - 2 * left[i]
    return _pad(x, extra), left


def _warn_same_once() -> None:
    global _warned_same
    if not _warned_same:  # PyTorch's TORCH_WARN_ONCE
        _warned_same = True
        warnings.warn(
            "Using padding='same' with even kernel lengths and odd dilation may "
            "require a zero-padded copy of the input be created",
            UserWarning,
            stacklevel=4,
        )


def _conv_nd(
    input: Tensor,
    weight: Tensor,
    bias: Tensor | None,
    stride: IntOrSeq,
    padding: IntOrSeq | str,
    dilation: IntOrSeq,
    groups: int,
    nd: int,
) -> Tensor:
    x, batched = _batch(input, nd, f"conv{nd}d")
    st, pad, dil = conv_args(f"conv{nd}d", nd, stride, padding, dilation, groups)
    if isinstance(padding, str):
        x, pad = _string_padding(x, weight, padding, st, dil)
    _check(x, weight, bias, pad, dil, groups, False)
    out = conv(x, weight, bias, st, pad, dil, False, (0,) * nd, groups)
    return out if batched else out.squeeze(0)  # type: ignore[attr-defined]


@tensor_arguments
def conv1d(
    input: Tensor,
    weight: Tensor,
    bias: Tensor | None = None,
    stride: IntOrSeq = 1,
    padding: IntOrSeq | str = 0,
    dilation: IntOrSeq = 1,
    groups: int = 1,
) -> Tensor:
    """1-d cross-correlation of ``[N, C_in, L]`` (or ``[C_in, L]``) by ``[C_out, C_in/groups,
    K]``.

    Args:
        input: the signal.
        weight: the filters.
        bias: optional ``[C_out]`` bias.
        stride, padding, dilation: ints or one-element tuples; `padding` may be ``"valid"`` or
            ``"same"`` (stride 1 only).
        groups: split the channels into this many independent groups.

    Returns:
        ``[N, C_out, L_out]`` (``ConvolutionBackward0``).

    Raises:
        RuntimeError: on mismatched ranks, dtypes, channels or a kernel larger than the
            padded input (PyTorch's messages).

    Example:
        >>> import hookgrad as torch
        >>> torch.nn.functional.conv1d(torch.ones(1, 1, 5), torch.ones(1, 1, 3)).tolist()
        [[[3.0, 3.0, 3.0]]]

    Mirrors: ``torch.nn.functional.conv1d``.
    """
    return _conv_nd(input, weight, bias, stride, padding, dilation, groups, 1)


@tensor_arguments
def conv2d(
    input: Tensor,
    weight: Tensor,
    bias: Tensor | None = None,
    stride: IntOrSeq = 1,
    padding: IntOrSeq | str = 0,
    dilation: IntOrSeq = 1,
    groups: int = 1,
) -> Tensor:
    """2-d cross-correlation of ``[N, C_in, H, W]`` (or ``[C_in, H, W]``) by ``[C_out,
    C_in/groups, KH, KW]``.

    Computed as one matrix multiply over a strided im2col view of the input; see
    `hookgrad._ops._conv_kernels`. Arguments as for `conv1d`, with pairs for the two dims.

    Returns:
        ``[N, C_out, H_out, W_out]`` (``ConvolutionBackward0``).

    Raises:
        RuntimeError: as `conv1d`.

    Example:
        >>> import hookgrad as torch
        >>> torch.nn.functional.conv2d(torch.ones(1, 1, 3, 3), torch.ones(1, 1, 2, 2)).shape
        torch.Size([1, 1, 2, 2])

    Mirrors: ``torch.nn.functional.conv2d``.
    """
    return _conv_nd(input, weight, bias, stride, padding, dilation, groups, 2)


def _conv_transpose_nd(
    input: Tensor,
    weight: Tensor,
    bias: Tensor | None,
    stride: IntOrSeq,
    padding: IntOrSeq,
    output_padding: IntOrSeq,
    groups: int,
    dilation: IntOrSeq,
    nd: int,
) -> Tensor:
    x, batched = _batch(input, nd, f"conv_transpose{nd}d")
    st, pad, dil = conv_args(f"conv_transpose{nd}d", nd, stride, padding, dilation, groups)
    _int_arg(output_padding, "output_padding", f"conv_transpose{nd}d")
    op = ntuple(output_padding, nd)
    if min(op) < 0:
        raise RuntimeError("negative output_padding is not supported")
    _check(x, weight, bias, pad, dil, groups, True)
    if any(o >= s and o >= d for o, s, d in zip(op, st, dil, strict=True)):
        names = ("height", "width") if nd == 2 else ("width",)
        raise RuntimeError(
            "output padding must be smaller than either stride or dilation, but got "
            + " ".join(f"output_padding_{n}: {o}" for n, o in zip(names, op, strict=True))
            + " "
            + " ".join(f"stride_{n}: {s}" for n, s in zip(names, st, strict=True))
            + " "
            + " ".join(f"dilation_{n}: {d}" for n, d in zip(names, dil, strict=True))
        )
    out = conv(x, weight, bias, st, pad, dil, True, op, groups)
    return out if batched else out.squeeze(0)  # type: ignore[attr-defined]


@tensor_arguments
def conv_transpose1d(
    input: Tensor,
    weight: Tensor,
    bias: Tensor | None = None,
    stride: IntOrSeq = 1,
    padding: IntOrSeq = 0,
    output_padding: IntOrSeq = 0,
    groups: int = 1,
    dilation: IntOrSeq = 1,
) -> Tensor:
    """1-d transposed convolution (the adjoint of `conv1d`); weight ``[C_in, C_out/groups, K]``.

    Returns:
        ``[N, C_out, (L-1)*stride - 2*padding + dilation*(K-1) + output_padding + 1]``.

    Raises:
        RuntimeError: on mismatched shapes or an output padding not smaller than stride or
            dilation.

    Mirrors: ``torch.nn.functional.conv_transpose1d``.
    """
    return _conv_transpose_nd(
        input, weight, bias, stride, padding, output_padding, groups, dilation, 1
    )


@tensor_arguments
def conv_transpose2d(
    input: Tensor,
    weight: Tensor,
    bias: Tensor | None = None,
    stride: IntOrSeq = 1,
    padding: IntOrSeq = 0,
    output_padding: IntOrSeq = 0,
    groups: int = 1,
    dilation: IntOrSeq = 1,
) -> Tensor:
    """2-d transposed convolution (the adjoint of `conv2d` in its input, "deconvolution").

    Args:
        input: ``[N, C_in, H, W]`` or ``[C_in, H, W]``.
        weight: ``[C_in, C_out/groups, KH, KW]``.
        bias: optional ``[C_out]``.
        stride, padding, output_padding, dilation: ints or pairs.
        groups: channel groups.

    Returns:
        ``[N, C_out, H_out, W_out]`` (``ConvolutionBackward0``).

    Raises:
        RuntimeError: as `conv_transpose1d`.

    Example:
        >>> import hookgrad as torch
        >>> F = torch.nn.functional
        >>> F.conv_transpose2d(torch.ones(1, 1, 2, 2), torch.ones(1, 1, 2, 2), stride=2).shape
        torch.Size([1, 1, 4, 4])

    Mirrors: ``torch.nn.functional.conv_transpose2d``.
    """
    return _conv_transpose_nd(
        input, weight, bias, stride, padding, output_padding, groups, dilation, 2
    )
