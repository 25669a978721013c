"""Instance normalization layers: `InstanceNorm1d`, `InstanceNorm2d`, `InstanceNorm3d`.

Each (sample, channel) plane is normalized over its spatial dims by
`hookgrad.nn.functional.instance_norm`. Defaults differ from batch norm as in PyTorch: no affine
parameters and no running statistics unless asked for. Mirrors:
``torch.nn.modules.instancenorm``.
"""

from __future__ import annotations

import warnings
from typing import Any

from hookgrad._tensor import Tensor
from hookgrad.nn import functional as F
from hookgrad.nn.modules.normalization import _NormBase

__all__ = ["InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d"]


class _InstanceNorm(_NormBase):
    """Shared forward of the instance norms. Mirrors:
    ``torch.nn.modules.instancenorm._InstanceNorm``."""

    _nd = 1

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float = 0.1,
                 affine: bool = False, track_running_stats: bool = False, device: Any = None,
                 dtype: Any = None, *, bias: bool = True) -> None:
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device, dtype,
                         bias=bias)

    def _get_no_batch_dim(self) -> int:
        return self._nd + 1

    def _check_input_dim(self, input: Tensor) -> None:
        n = self._nd
        if input.dim() not in (n + 1, n + 2):
            raise ValueError(f"expected {n + 1}D or {n + 2}D input (got {input.dim()}D input)")

    def _apply_instance_norm(self, input: Tensor) -> Tensor:
        return F.instance_norm(
            input, self.running_mean, self.running_var, self.weight, self.bias,
            self.training or not self.track_running_stats,
            self.momentum if self.momentum is not None else 0.0, self.eps)

    def forward(self, input: Tensor) -> Tensor:
        self._check_input_dim(input)
        feature_dim = input.dim() - self._get_no_batch_dim()
        if input.size(feature_dim) != self.num_features:
            if self.affine:
                raise ValueError(
                    f"expected input's size at dim={feature_dim} to match num_features "
                    f"({self.num_features}), but got: {input.size(feature_dim)}.")
            warnings.warn(
                f"input's size at dim={feature_dim} does not match num_features. You can "
                "silence this warning by not passing in num_features, which is not used "
                "because affine=False", stacklevel=2)
        if input.dim() == self._get_no_batch_dim():
            return self._apply_instance_norm(input.unsqueeze(0)).squeeze(0)  # type: ignore
        return self._apply_instance_norm(input)

    def _load_from_state_dict(self, state_dict: dict, prefix: str, local_metadata: dict,
                              strict: bool, missing_keys: list, unexpected_keys: list,
                              error_msgs: list) -> None:
        # Checkpoints older than version 1 may hold running stats this layer does not track.
        if local_metadata.get("version") is None and not self.track_running_stats:
            keys = [prefix + n for n in ("running_mean", "running_var") if prefix + n in state_dict]
            if keys:
                name = type(self).__name__
                error_msgs.append(
                    f"Unexpected running stats buffer(s) {' and '.join(repr(k) for k in keys)} "
                    f"for {name} with track_running_stats=False. Please remove these keys from "
                    "state_dict.")
                for key in keys:
                    state_dict.pop(key)
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict, missing_keys,
                                      unexpected_keys, error_msgs)


class InstanceNorm1d(_InstanceNorm):
    """Instance normalization over ``[N, C, L]`` (or ``[C, L]``).

    Args:
        num_features: ``C``.
        eps: added to the variance.
        momentum: running-average factor (with `track_running_stats`).
        affine: learn per-channel ``weight`` and ``bias`` (default off).
        track_running_stats: keep running statistics and use them in evaluation mode.

    Mirrors: ``torch.nn.InstanceNorm1d``.
    """

    _nd = 1


class InstanceNorm2d(_InstanceNorm):
    """Instance normalization over ``[N, C, H, W]`` (or ``[C, H, W]``).

    Example:
        >>> import hookgrad as torch
        >>> out = torch.nn.InstanceNorm2d(2)(torch.randn(1, 2, 3, 3))
        >>> [round(v, 4) + 0.0 for v in out.mean((2, 3)).flatten().tolist()]
        [0.0, 0.0]

    Mirrors: ``torch.nn.InstanceNorm2d``.
    """

    _nd = 2


class InstanceNorm3d(_InstanceNorm):
    """Instance normalization over ``[N, C, D, H, W]`` (or ``[C, D, H, W]``).

    Mirrors: ``torch.nn.InstanceNorm3d``.
    """

    _nd = 3
