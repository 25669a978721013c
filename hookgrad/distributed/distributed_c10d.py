"""``torch.distributed.distributed_c10d``: the module PyTorch defines its collectives in,
which libraries import names (and ``_get_default_group``) from.

Mirrors: ``torch.distributed.distributed_c10d``.
"""

from __future__ import annotations

from hookgrad.distributed._composite import *  # noqa: F403
from hookgrad.distributed._names import *  # noqa: F403
from hookgrad.distributed._names import Backend, DebugLevel, ReduceOp, default_pg_timeout
from hookgrad.distributed.collectives import (
    all_gather,
    all_gather_object,
    all_reduce,
    barrier,
    broadcast,
    broadcast_object_list,
    reduce,
)
from hookgrad.distributed.process_group import (
    GroupMember,
    ProcessGroup,
    _get_default_group,
    destroy_process_group,
    get_backend,
    get_global_rank,
    get_group_rank,
    get_process_group_ranks,
    get_rank,
    get_world_size,
    group,
    init_process_group,
    is_initialized,
    new_group,
)

__all__ = [
    "Backend", "DebugLevel", "GroupMember", "ProcessGroup", "ReduceOp", "_get_default_group",
    "all_gather", "all_gather_object", "all_reduce", "barrier", "broadcast",
    "broadcast_object_list", "default_pg_timeout", "destroy_process_group", "get_backend",
    "get_global_rank", "get_group_rank", "get_process_group_ranks", "get_rank",
    "get_world_size", "group", "init_process_group", "is_initialized", "new_group", "reduce",
]
