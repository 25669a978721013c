"""``hookgrad.distributed.optim``: importable; the sharded optimizers raise a clear error.

Mirrors: ``torch.distributed.optim``. hookgrad has no ZeRO optimizer-state sharding nor RPC
optimizers; training frameworks (pytorch-ignite) import `ZeroRedundancyOptimizer` at load time
for ``isinstance`` checks, which are False for every hookgrad optimizer. Constructing one raises
``NotImplementedError`` (use a plain optimizer with `DistributedDataParallel`).
"""

from __future__ import annotations

from typing import Any

from hookgrad.optim.optimizer import Optimizer

__all__ = ["ZeroRedundancyOptimizer", "DistributedOptimizer", "PostLocalSGDOptimizer"]


class _Unsupported(Optimizer):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise NotImplementedError(
            f"{type(self).__name__}: hookgrad has no sharded or RPC optimizers; use a plain "
            "optimizer with hookgrad.nn.parallel.DistributedDataParallel")


class ZeroRedundancyOptimizer(_Unsupported):
    """ZeRO optimizer-state sharding; constructing one raises ``NotImplementedError``.

    Mirrors: ``torch.distributed.optim.ZeroRedundancyOptimizer``.
    """


class DistributedOptimizer(_Unsupported):
    """The RPC optimizer; constructing one raises ``NotImplementedError``.

    Mirrors: ``torch.distributed.optim.DistributedOptimizer``.
    """


class PostLocalSGDOptimizer(_Unsupported):
    """Local SGD with periodic averaging; constructing one raises ``NotImplementedError``.

    Mirrors: ``torch.distributed.optim.PostLocalSGDOptimizer``.
    """
