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

# PyTorch's ``__all__`` also lists these
__all__ += [
    "BackendConfig", "all_gather_coalesced", "all_reduce_coalesced", "all_to_all",
    "all_to_all_single", "gather", "gather_object", "get_default_backend_for_device",
    "is_gloo_available", "is_mpi_available", "is_backend_available", "is_nccl_available",
    "is_torchelastic_launched", "is_ucc_available", "is_xccl_available", "monitored_barrier",
    "new_subgroups", "new_subgroups_by_enumeration", "reduce_scatter", "scatter",
    "scatter_object_list", "supports_complex", "AllreduceCoalescedOptions", "AllreduceOptions",
    "AllToAllOptions", "BarrierOptions", "BroadcastOptions", "GatherOptions", "ReduceOptions",
    "ReduceScatterOptions", "ScatterOptions", "get_debug_level", "Work", "all_gather_single",
    "all_gather_into_tensor", "reduce_scatter_single", "reduce_scatter_tensor",
    "get_node_local_rank"
]
