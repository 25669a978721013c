"""Built-in DDP communication hooks and `register_ddp_comm_hook`.

Mirrors: ``torch.distributed.algorithms.ddp_comm_hooks``.
"""

from __future__ import annotations

import enum
from functools import partial
from typing import Any

from hookgrad.distributed.algorithms.ddp_comm_hooks import (
    debugging_hooks,
    default_hooks,
    powerSGD_hook,
)


def _power_sgd(model: Any, state: Any, rank: int, batched: bool = False) -> None:
    ps = powerSGD_hook.PowerSGDState(process_group=state, matrix_approximation_rank=rank,
                                     start_powerSGD_iter=1000)
    hook = powerSGD_hook.batched_powerSGD_hook if batched else powerSGD_hook.powerSGD_hook
    model.register_comm_hook(ps, hook)


def _plain(hook: Any, model: Any, state: Any) -> None:
    model.register_comm_hook(state, hook)


class DDPCommHookType(enum.Enum):
    """Names of the built-in hooks for `register_ddp_comm_hook`.

    Mirrors: ``torch.distributed.algorithms.ddp_comm_hooks.DDPCommHookType``.
    """

    ALLREDUCE = partial(_plain, default_hooks.allreduce_hook)
    FP16_COMPRESS = partial(_plain, default_hooks.fp16_compress_hook)
    BF16_COMPRESS = partial(_plain, default_hooks.bf16_compress_hook)
    POWER_SGD = partial(_power_sgd, rank=1)
    POWER_SGD_RANK2 = partial(_power_sgd, rank=2)
    BATCHED_POWER_SGD = partial(_power_sgd, rank=1, batched=True)
    BATCHED_POWER_SGD_RANK2 = partial(_power_sgd, rank=2, batched=True)
    NOOP = partial(_plain, debugging_hooks.noop_hook)


def register_ddp_comm_hook(comm_hook_type: DDPCommHookType, model: Any,
                           state: Any = None) -> None:
    """Register the built-in hook ``comm_hook_type`` on the DDP ``model``.

    Mirrors: ``torch.distributed.algorithms.ddp_comm_hooks.register_ddp_comm_hook``.
    """
    comm_hook_type.value(model=model, state=state)


__all__ = ["DDPCommHookType", "debugging_hooks", "default_hooks", "powerSGD_hook",
           "register_ddp_comm_hook"]
