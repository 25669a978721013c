"""``hookgrad.distributed.fsdp``: importable; sharding a module raises a clear error.

Mirrors: ``torch.distributed.fsdp``. hookgrad has no fully sharded data parallelism. Libraries
import `FSDPModule` / `FullyShardedDataParallel` at load time for ``isinstance`` checks, which
are False for every hookgrad module; `fully_shard` and constructing `FullyShardedDataParallel`
raise ``NotImplementedError`` (use `hookgrad.nn.parallel.DistributedDataParallel`). The
option enums carry PyTorch's members.

Example:
    >>> import hookgrad
    >>> from hookgrad.distributed.fsdp import FSDPModule, ShardingStrategy
    >>> isinstance(hookgrad.nn.Linear(2, 2), FSDPModule), ShardingStrategy.FULL_SHARD.value
    (False, 1)
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Any, NoReturn

from hookgrad.nn.modules.batchnorm import _BatchNorm
from hookgrad.nn.modules.module import Module

__all__ = ["FSDPModule", "fully_shard", "FullyShardedDataParallel", "ShardingStrategy",
           "BackwardPrefetch", "StateDictType", "OptimStateKeyType", "MixedPrecision",
           "CPUOffload", "FullStateDictConfig", "MixedPrecisionPolicy", "OffloadPolicy",
           "CPUOffloadPolicy"]

_WHY = ("hookgrad has no fully sharded data parallelism; use "
        "hookgrad.nn.parallel.DistributedDataParallel instead")


def _unsupported(what: str) -> NoReturn:
    raise NotImplementedError(f"{what}: {_WHY}")


class FSDPModule:
    """The class `fully_shard` mixes into a module; no hookgrad module is one.

    Mirrors: ``torch.distributed.fsdp.FSDPModule``.
    """


def fully_shard(module: Any, **kwargs: Any) -> NoReturn:
    """Raises ``NotImplementedError``. Mirrors: ``torch.distributed.fsdp.fully_shard``."""
    _unsupported("fully_shard")


class FullyShardedDataParallel(Module):
    """PyTorch's FSDP wrapper; constructing one raises ``NotImplementedError``.

    Mirrors: ``torch.distributed.fsdp.FullyShardedDataParallel``.
    """

    def __init__(self, module: Any, *args: Any, **kwargs: Any) -> None:
        _unsupported("FullyShardedDataParallel")


class ShardingStrategy(enum.Enum):
    """Mirrors: ``torch.distributed.fsdp.ShardingStrategy``."""

    FULL_SHARD = enum.auto()
    SHARD_GRAD_OP = enum.auto()
    NO_SHARD = enum.auto()
    HYBRID_SHARD = enum.auto()
    _HYBRID_SHARD_ZERO2 = enum.auto()


class BackwardPrefetch(enum.Enum):
    """Mirrors: ``torch.distributed.fsdp.BackwardPrefetch``."""

    BACKWARD_PRE = enum.auto()
    BACKWARD_POST = enum.auto()


class StateDictType(enum.Enum):
    """Mirrors: ``torch.distributed.fsdp.StateDictType``."""

    FULL_STATE_DICT = enum.auto()
    LOCAL_STATE_DICT = enum.auto()
    SHARDED_STATE_DICT = enum.auto()


class OptimStateKeyType(enum.Enum):
    """Mirrors: ``torch.distributed.fsdp.OptimStateKeyType``."""

    PARAM_NAME = enum.auto()
    PARAM_ID = enum.auto()


@dataclass
class MixedPrecision:
    """FSDP's mixed-precision options (a record). Mirrors: ``fsdp.MixedPrecision``."""

    param_dtype: Any = None
    reduce_dtype: Any = None
    buffer_dtype: Any = None
    keep_low_precision_grads: bool = False
    cast_forward_inputs: bool = False
    cast_root_forward_inputs: bool = True
    _module_classes_to_ignore: tuple = (_BatchNorm,)


@dataclass
class CPUOffload:
    """FSDP's CPU-offload option (a record). Mirrors: ``fsdp.CPUOffload``."""

    offload_params: bool = False


@dataclass
class FullStateDictConfig:
    """Options of a full state dict (a record). Mirrors: ``fsdp.FullStateDictConfig``."""

    offload_to_cpu: bool = False
    rank0_only: bool = False


@dataclass
class MixedPrecisionPolicy:
    """`fully_shard`'s mixed-precision options (a record). Mirrors: ``MixedPrecisionPolicy``."""

    param_dtype: Any = None
    reduce_dtype: Any = None
    output_dtype: Any = None
    cast_forward_inputs: bool = True


@dataclass
class OffloadPolicy:
    """`fully_shard`'s offload base record. Mirrors: ``fsdp.OffloadPolicy``."""


@dataclass
class CPUOffloadPolicy(OffloadPolicy):
    """Mirrors: ``fsdp.CPUOffloadPolicy``."""

    pin_memory: bool = True
