"""`BatchNorm3d` and `SyncBatchNorm`.

`SyncBatchNorm` behaves as PyTorch's does in a single process: its statistics are synchronised
only when ``torch.distributed`` is initialised, in training mode, on an accelerator; otherwise
(always, on hookgrad's CPU tensors without a process group) it is plain batch normalization.
"""

from __future__ import annotations

import sys
from typing import Any

from hookgrad._tensor import Tensor
from hookgrad.autograd.grad_mode import no_grad
from hookgrad.nn.modules.module import Module
from hookgrad.nn.modules.normalization import _BatchNorm

__all__ = ["BatchNorm3d", "SyncBatchNorm"]


class BatchNorm3d(_BatchNorm):
    """Batch normalization over ``[N, C, D, H, W]``, per channel.

    Args as `BatchNorm1d`.

    Mirrors: ``torch.nn.BatchNorm3d``.
    """

    def _check_input_dim(self, input: Tensor) -> None:
        if input.dim() != 5:
            raise ValueError(f"expected 5D input (got {input.dim()}D input)")


class SyncBatchNorm(_BatchNorm):
    """Batch normalization whose statistics would be reduced across a process group.

    In one process (no initialised process group) it computes exactly `BatchNorm1d`/`2d`/`3d`
    for any input of at least 2 dims, as PyTorch's does.

    Args:
        num_features, eps, momentum, affine, track_running_stats: as `BatchNorm1d`.
        process_group: kept for `convert_sync_batchnorm` and the distributed path.

    Example:
        >>> import hookgrad as torch
        >>> torch.nn.SyncBatchNorm(3)(torch.randn(4, 3, 2)).shape
        torch.Size([4, 3, 2])

    Mirrors: ``torch.nn.SyncBatchNorm``.
    """

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1,
                 affine: bool = True, track_running_stats: bool = True,
                 process_group: Any = None, device: Any = None, dtype: Any = None, *,
                 bias: bool = True) -> None:
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device, dtype,
                         bias=bias)
        self.process_group = process_group

    def _check_input_dim(self, input: Tensor) -> None:
        if input.dim() < 2:
            raise ValueError(f"expected at least 2D input (got {input.dim()}D input)")

    def _check_non_zero_input_channels(self, input: Tensor) -> None:
        if input.size(1) == 0:
            raise ValueError("SyncBatchNorm number of input channels should be non-zero")

    def forward(self, input: Tensor) -> Tensor:
        self._check_input_dim(input)
        self._check_non_zero_input_channels(input)
        return super().forward(input)

    @classmethod
    def convert_sync_batchnorm(cls, module: Module, process_group: Any = None) -> Module:
        """Replace every batch-norm layer in `module` (recursively) by a `SyncBatchNorm`
        sharing its parameters and buffers.

        Mirrors: ``torch.nn.SyncBatchNorm.convert_sync_batchnorm``.
        """
        out = module
        if isinstance(module, _BatchNorm):
            out = cls(module.num_features, module.eps, module.momentum, module.affine,
                      module.track_running_stats, process_group, bias=module.bias is not None)
            if module.affine:
                with no_grad():
                    out.weight = module.weight
                    out.bias = module.bias
            out.running_mean = module.running_mean
            out.running_var = module.running_var
            out.num_batches_tracked = module.num_batches_tracked
            out.training = module.training
            if hasattr(module, "qconfig"):
                out.qconfig = module.qconfig
        for name, child in module.named_children():
            out.add_module(name, cls.convert_sync_batchnorm(child, process_group))
        return out


# PyTorch's module path (torch.nn.modules.normalization.<name>): tools import these classes from there.
_home = sys.modules["hookgrad.nn.modules.normalization"]
for _name in __all__:
    setattr(_home, _name, globals()[_name])
