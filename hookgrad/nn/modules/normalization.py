"""Normalization layers: `BatchNorm1d`, `BatchNorm2d`, `LayerNorm`, `GroupNorm`.

PyTorch keeps batch norm in ``batchnorm.py``; it sits here with the other normalizations.
"""

from __future__ import annotations

import numbers
from collections.abc import Sequence
from typing import Any

from hookgrad._dtypes import int64
from hookgrad._functional import creation as _creation
from hookgrad._tensor import Tensor
from hookgrad.nn import functional as F
from hookgrad.nn import init
from hookgrad.nn.modules.module import Module
from hookgrad.nn.parameter import Parameter

__all__ = ["BatchNorm1d", "BatchNorm2d", "LayerNorm", "GroupNorm"]


def _affine_params(mod: Module, affine: bool, bias: bool, shape: Sequence[int], dtype: Any) -> None:
    """Register ``weight`` and ``bias`` (None when disabled), in PyTorch's order."""
    if affine:
        mod.weight = Parameter(_creation.empty(*shape, dtype=dtype))
        if bias:
            mod.bias = Parameter(_creation.empty(*shape, dtype=dtype))
        else:
            mod.register_parameter("bias", None)
    else:
        mod.register_parameter("weight", None)
        mod.register_parameter("bias", None)


def _reset_affine(mod: Module) -> None:
    if mod.weight is not None:
        init.ones_(mod.weight)
    if mod.bias is not None:
        init.zeros_(mod.bias)


class _NormBase(Module):
    """Parameters, running-statistics buffers and repr shared by the batch norms."""

    _version = 2
    __constants__ = ["track_running_stats", "momentum", "eps", "num_features", "affine"]

    def __init__(
        self,
        num_features: int,
        eps: float = 1e-5,
        momentum: float | None = 0.1,
        affine: bool = True,
        track_running_stats: bool = True,
        device: Any = None,
        dtype: Any = None,
        *,
        bias: bool = True,
    ) -> None:
        super().__init__()
        self.num_features = num_features
        self.eps = eps
        self.momentum = momentum
        self.affine = affine
        self.track_running_stats = track_running_stats
        _affine_params(self, affine, bias, (num_features,), dtype)
        if track_running_stats:
            self.register_buffer("running_mean", _creation.zeros(num_features, dtype=dtype))
            self.register_buffer("running_var", _creation.ones(num_features, dtype=dtype))
            self.register_buffer("num_batches_tracked", _creation.tensor(0, dtype=int64))
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)
        self.reset_parameters()

    def reset_running_stats(self) -> None:
        """Zero the running mean and count, set the running variance to one."""
        if self.track_running_stats:
            self.running_mean.zero_()  # type: ignore[union-attr]
            self.running_var.fill_(1)  # type: ignore[union-attr]
            self.num_batches_tracked.zero_()  # type: ignore[union-attr]

    def reset_parameters(self) -> None:
        """Reset the running statistics; weight to one, bias to zero."""
        self.reset_running_stats()
        _reset_affine(self)

    def _check_input_dim(self, input: Tensor) -> None:
        raise NotImplementedError

    def extra_repr(self) -> str:
        return (
            f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, "
            f"affine={self.affine}, bias={self.bias is not None}, "
            f"track_running_stats={self.track_running_stats}"
        )

    def _load_from_state_dict(
        self,
        state_dict: dict,
        prefix: str,
        local_metadata: dict,
        strict: bool,
        missing_keys: list,
        unexpected_keys: list,
        error_msgs: list,
    ) -> None:
        # State dicts saved before ``num_batches_tracked`` existed (version < 2) load with 0.
        version = local_metadata.get("version")
        if (version is None or version < 2) and self.track_running_stats:
            key = prefix + "num_batches_tracked"
            if key not in state_dict:
                state_dict[key] = (
                    self.num_batches_tracked
                    if self.num_batches_tracked is not None
                    else _creation.tensor(0)
                )
        super()._load_from_state_dict(
            state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs
        )


class _BatchNorm(_NormBase):
    def forward(self, input: Tensor) -> Tensor:
        self._check_input_dim(input)
        factor = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats and self.num_batches_tracked is not None:
            self.num_batches_tracked.add_(1)  # type: ignore[attr-defined]
            if self.momentum is None:  # cumulative moving average
                factor = 1.0 / float(self.num_batches_tracked)
        if self.training:
            bn_training = True
        else:
            bn_training = self.running_mean is None and self.running_var is None
        use_buffers = not self.training or self.track_running_stats
        return F.batch_norm(
            input,
            self.running_mean if use_buffers else None,
            self.running_var if use_buffers else None,
            self.weight,
            self.bias,
            bn_training,
            factor,
            self.eps,
        )


class BatchNorm1d(_BatchNorm):
    """Batch normalization over ``[N, C]`` or ``[N, C, L]``, per channel.

    Args:
        num_features: ``C``.
        eps: added to the variance.
        momentum: running-average factor; ``None`` gives a cumulative average.
        affine: learn ``weight`` (ones) and ``bias`` (zeros).
        track_running_stats: keep ``running_mean``, ``running_var`` and
            ``num_batches_tracked`` buffers and use them in evaluation mode.
        device, dtype: factory arguments.

    Example:
        >>> import hookgrad as torch
        >>> bn = torch.nn.BatchNorm1d(3)
        >>> _ = bn(torch.randn(8, 3))
        >>> int(bn.num_batches_tracked)
        1

    Mirrors: ``torch.nn.BatchNorm1d``.
    """

    def _check_input_dim(self, input: Tensor) -> None:
        if input.dim() != 2 and input.dim() != 3:
            raise ValueError(f"expected 2D or 3D input (got {input.dim()}D input)")


class BatchNorm2d(_BatchNorm):
    """Batch normalization over ``[N, C, H, W]``, per channel.

    Args as `BatchNorm1d`.

    Mirrors: ``torch.nn.BatchNorm2d``.
    """

    def _check_input_dim(self, input: Tensor) -> None:
        if input.dim() != 4:
            raise ValueError(f"expected 4D input (got {input.dim()}D input)")


class LayerNorm(Module):
    """Normalize over the trailing `normalized_shape` dims of each sample.

    Args:
        normalized_shape: int or shape of the trailing dims.
        eps: added to the variance.
        elementwise_affine: learn a per-element ``weight`` (ones) and ``bias`` (zeros).
        bias: learn the bias (when `elementwise_affine`).
        device, dtype: factory arguments.

    Example:
        >>> import hookgrad as torch
        >>> torch.nn.LayerNorm(4)(torch.randn(2, 4)).shape
        torch.Size([2, 4])

    Mirrors: ``torch.nn.LayerNorm``.
    """

    __constants__ = ["normalized_shape", "eps", "elementwise_affine"]

    def __init__(
        self,
        normalized_shape: int | Sequence[int],
        eps: float = 1e-5,
        elementwise_affine: bool = True,
        bias: bool = True,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__()
        if isinstance(normalized_shape, numbers.Integral):
            normalized_shape = (int(normalized_shape),)
        self.normalized_shape = tuple(normalized_shape)  # type: ignore[arg-type]
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        _affine_params(self, elementwise_affine, bias, self.normalized_shape, dtype)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Weight to one, bias to zero."""
        _reset_affine(self)

    def forward(self, input: Tensor) -> Tensor:
        return F.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (
            f"{self.normalized_shape}, eps={self.eps}, "
            f"elementwise_affine={self.elementwise_affine}, bias={self.bias is not None}"
        )


class GroupNorm(Module):
    """Normalize groups of channels of each sample, then scale and shift per channel.

    Args:
        num_groups: number of channel groups.
        num_channels: ``C`` (divisible by `num_groups`).
        eps: added to the variance.
        affine: learn per-channel ``weight`` (ones) and ``bias`` (zeros).
        device, dtype: factory arguments.

    Raises:
        ValueError: when `num_channels` is not divisible by `num_groups`.

    Mirrors: ``torch.nn.GroupNorm``.
    """

    __constants__ = ["num_groups", "num_channels", "eps", "affine"]

    def __init__(
        self,
        num_groups: int,
        num_channels: int,
        eps: float = 1e-5,
        affine: bool = True,
        device: Any = None,
        dtype: Any = None,
        *,
        bias: bool = True,
    ) -> None:
        super().__init__()
        if num_channels % num_groups != 0:
            raise ValueError(
                f"num_channels ({num_channels}) must be divisible by num_groups ({num_groups})"
            )
        self.num_groups = num_groups
        self.num_channels = num_channels
        self.eps = eps
        self.affine = affine
        _affine_params(self, affine, bias, (num_channels,), dtype)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Weight to one, bias to zero."""
        _reset_affine(self)

    def forward(self, input: Tensor) -> Tensor:
        return F.group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (
            f"{self.num_groups}, {self.num_channels}, eps={self.eps}, affine={self.affine}, "
            f"bias={self.bias is not None}"
        )
