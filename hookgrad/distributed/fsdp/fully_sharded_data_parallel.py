"""The module PyTorch defines `FullyShardedDataParallel` and its option records in.

Mirrors: ``torch.distributed.fsdp.fully_sharded_data_parallel`` (the same objects as
`hookgrad.distributed.fsdp`; tools import them from this path).
"""

from __future__ import annotations

from hookgrad.distributed.fsdp import (
    BackwardPrefetch,
    CPUOffload,
    FullStateDictConfig,
    FullyShardedDataParallel,
    MixedPrecision,
    OptimStateKeyType,
    ShardingStrategy,
    StateDictType,
)

__all__ = ["FullyShardedDataParallel", "ShardingStrategy", "BackwardPrefetch", "StateDictType",
           "OptimStateKeyType", "MixedPrecision", "CPUOffload", "FullStateDictConfig"]
