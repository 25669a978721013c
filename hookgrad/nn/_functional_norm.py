"""Normalization of `hookgrad.nn.functional`: ``batch_norm``, ``layer_norm``, ``group_norm``.

Each binds one primitive of `hookgrad._ops.normalization` (``NativeBatchNormBackward0``,
``NativeLayerNormBackward0``, ``NativeGroupNormBackward0``) and returns its first output.
Missing optional tensors become empty constants so the node keeps PyTorch's three edges.
"""

from __future__ import annotations

import math

from collections.abc import Sequence
from typing import Any

from hookgrad._ops._checks import tensor_arguments
from hookgrad._backend import namespace_of
from hookgrad._dispatch import bind
from hookgrad._ops import normalization as _N
from hookgrad._tensor import Tensor

__all__ = ["batch_norm", "layer_norm", "group_norm"]


def _or_empty(t: Tensor | None, like: Tensor) -> Tensor:
    if t is not None:
        return t
    data = like._data
    empty = Tensor._make(namespace_of(data).zeros((0,), dtype=data.dtype))
    empty._absent = True  # saved-tensor hooks skip it: PyTorch saves nothing for a None
    return empty


def _check_norm_dtypes(kernel: str, input: Tensor, *others: Tensor | None) -> None:
    """The CPU kernels' dtype rules: a floating input with the same dtype as every given
    statistic and affine parameter."""
    if not input.is_floating_point() and all(t is None for t in others):
        raise NotImplementedError(f"\"{kernel}\" not implemented for "
                                  f"'{input.dtype.legacy_name[:-6]}'")
    if not input.is_floating_point() and kernel == "batch_norm":
        raise NotImplementedError(f"\"batch_norm\" not implemented for "
                                  f"'{input.dtype.legacy_name[:-6]}'")
    # (reduced-precision input with float32 parameters is the one mix the kernels take)
    low = input.dtype.name in ("float16", "bfloat16")
    if any(t is not None and t.dtype != input.dtype and not (low and t.dtype.name == "float32")
           for t in others):
        raise RuntimeError("mixed dtype (CPU): all inputs must share same datatype.")


def batch_norm(
    input: Tensor,
    running_mean: Tensor | None,
    running_var: Tensor | None,
    weight: Tensor | None = None,
    bias: Tensor | None = None,
    training: bool = False,
    momentum: float = 0.1,
    eps: float = 1e-5,
) -> Tensor:
    """Normalize each channel (dim 1) over the batch and spatial dims.

    In training mode the batch statistics are used and, when given, the running statistics
    are updated in place: ``running = (1 - momentum) * running + momentum * batch`` (the
    running variance uses the unbiased batch variance). Otherwise the running statistics
    normalize.

    Args:
        input: ``[N, C, *]``.
        running_mean, running_var: ``[C]`` buffers (may be None in training mode).
        weight, bias: optional ``[C]`` affine parameters.
        training: use batch statistics.
        momentum: running-average factor.
        eps: added to the variance.

    Returns:
        The normalized input (``NativeBatchNormBackward0``).

    Raises:
        ValueError: in training mode when a channel has a single value.
        RuntimeError: in evaluation mode without running statistics.

    Example:
        >>> import hookgrad as torch
        >>> x = torch.tensor([[1.0], [3.0]])
        >>> torch.nn.functional.batch_norm(x, None, None, training=True).tolist()
        [[-0.9999949932098389], [0.9999949932098389]]

    Mirrors: ``torch.nn.functional.batch_norm``.
    """
    _check_norm_dtypes("batch_norm", input, running_mean, running_var, weight, bias)
    if training:
        size = input.size(0)
        for n in tuple(input.shape)[2:]:
            size *= n
        if size == 1:
            raise ValueError(
                "Expected more than 1 value per channel when training, got input "
                f"size {input.size()}"
            )
    if input.numel() == 0:
        # ATen's _batch_norm_impl_index returns before its checks: a clone (not a view, not a
        # fresh empty tensor: the graph is kept) times weight[0] plus bias[0]; nothing is
        # saved, no buffer changes
        out = input.clone()  # type: ignore[attr-defined]
        if weight is not None:
            out = out * weight[0]
        if bias is not None:
            out = out + bias[0]
        return out
    if not training:
        for name, buf in (("running_mean", running_mean), ("running_var", running_var)):
            if buf is None:
                raise RuntimeError(f"{name} must be defined in evaluation mode")
    channels = input.size(1) if input.dim() > 1 else 1
    for name, t in (("running_mean", running_mean), ("running_var", running_var),
                    ("weight", weight), ("bias", bias)):  # checked before any buffer changes
        if t is not None and t.numel() != channels:
            raise RuntimeError(f"{name} should contain {channels} elements not {t.numel()}")
    args = (
        input,
        _or_empty(weight, input),
        _or_empty(bias, input),
        _or_empty(running_mean, input),
        _or_empty(running_var, input),
    )
    # The kernel updates the running statistics in place without bumping their version
    # counters, as ATen's native_batch_norm does (its schema does not mark them mutated).
    return bind(
        _N.NATIVE_BATCH_NORM, args, {"training": training, "momentum": momentum, "eps": eps}
    )[0]


def _check_param_dtypes(input: Tensor, weight: Tensor | None, bias: Tensor | None) -> None:
    """PyTorch's CPU mixed-dtype errors of layer_norm (float32 input, float64 params...)."""
    params = [t for t in (weight, bias) if t is not None]
    if all(t.dtype == input.dtype for t in params):
        return
    if input.dtype.itemsize > 4:  # float64 input: parameters must match it
        raise RuntimeError("mixed dtype (CPU): all inputs must share same datatype.")
    if weight is not None and bias is not None and weight.dtype == input.dtype:
        raise RuntimeError(f"expected scalar type {input.dtype.scalar_type} but found "
                           f"{bias.dtype.scalar_type}")
    raise RuntimeError("mixed dtype (CPU): expect parameter to have scalar type of "
                       f"{input.dtype.scalar_type}")


@tensor_arguments
def layer_norm(
    input: Tensor,
    normalized_shape: Sequence[int],
    weight: Tensor | None = None,
    bias: Tensor | None = None,
    eps: float = 1e-5,
) -> Tensor:
    """Normalize over the trailing `normalized_shape` dims, then scale and shift elementwise.

    Returns:
        The normalized input (``NativeLayerNormBackward0``).

    Raises:
        TypeError: when `normalized_shape` is an int (PyTorch's functional form wants a
            sequence; `LayerNorm` accepts an int).
        RuntimeError: when the input's trailing dims are not `normalized_shape`.

    Example:
        >>> import hookgrad as torch
        >>> torch.nn.functional.layer_norm(torch.tensor([[1.0, 3.0]]), (2,)).tolist()
        [[-0.9999949932098389, 0.9999949932098389]]

    Mirrors: ``torch.nn.functional.layer_norm``.
    """
    if isinstance(normalized_shape, int):  # PyTorch's binding rejects a bare int
        raise TypeError(
            "layer_norm(): argument 'normalized_shape' (position 2) must be tuple of ints, not int"
        )
    shape = tuple(normalized_shape)
    k = len(shape)
    if k == 0 or input.dim() < k or tuple(input.shape)[-k:] != shape:
        raise RuntimeError(
            f"Given normalized_shape={list(shape)}, expected input with shape "
            f"[*, {', '.join(map(str, shape))}], but got input of size{list(input.shape)}"
        )
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and tuple(t.shape) != shape:
            raise RuntimeError(
                f"Expected {name} to be of same shape as normalized_shape, but got {name} of "
                f"shape {list(t.shape)} and normalized_shape = {list(shape)}"
            )
    _check_param_dtypes(input, weight, bias)
    args = (input, _or_empty(weight, input), _or_empty(bias, input))
    return bind(_N.NATIVE_LAYER_NORM, args, {"normalized_shape": shape, "eps": eps})[0]


def group_norm(
    input: Tensor,
    num_groups: int,
    weight: Tensor | None = None,
    bias: Tensor | None = None,
    eps: float = 1e-5,
) -> Tensor:
    """Split the channels (dim 1) into `num_groups` groups and normalize each group of each
    sample, then scale and shift per channel.

    Returns:
        The normalized input (``NativeGroupNormBackward0``).

    Raises:
        RuntimeError: for fewer than 2 dims or channels not divisible by `num_groups`.

    Example:
        >>> import hookgrad as torch
        >>> torch.nn.functional.group_norm(torch.ones(2, 4, 3), 2).shape
        torch.Size([2, 4, 3])

    Mirrors: ``torch.nn.functional.group_norm``.
    """
    if input.dim() < 2:
        raise RuntimeError(
            f"Expected at least 2 dimensions for input tensor but received {input.dim()}"
        )
    n, c = input.size(0), input.size(1)
    _check_norm_dtypes("GroupNormKernelImpl", input, weight, bias)
    for t in (weight, bias):
        if t is not None and (t.dim() != 1 or t.numel() != c):
            raise RuntimeError(
                "Expected weight to be a vector of size equal to the number of channels in "
                f"input, but got weight of shape {list(t.shape)} and input of shape "
                f"{list(input.shape)}")
    # PyTorch's Python-level check, before the kernel's (num_groups=0: ZeroDivisionError)
    size = [n * c // num_groups, num_groups, *input.shape[2:]]
    if math.prod([size[0], *size[2:]]) == 1:
        raise ValueError(f"Expected more than 1 value per channel when training, got input size "
                         f"{size}")
    if num_groups <= 0 or c % num_groups:
        raise RuntimeError(
            "Expected number of channels in input to be divisible by num_groups, but got input "
            f"of shape {list(input.shape)} and num_groups={num_groups}"
        )
    hxw = input.numel() // max(n * c, 1)
    args = (input, _or_empty(weight, input), _or_empty(bias, input))
    params: dict[str, Any] = {"N": n, "C": c, "HxW": hxw, "group": num_groups, "eps": eps}
    return bind(_N.NATIVE_GROUP_NORM, args, params)[0]
