"""Process groups and collectives over MPI (mpi4py + MPICH) or in-process threads (tests).

Example:
    >>> import hookgrad
    >>> import hookgrad.distributed as dist
    >>> from hookgrad.testing.distributed import run_ranks
    >>> def fn(rank, world_size):
    ...     t = hookgrad.tensor([rank + 1.0])
    ...     dist.all_reduce(t)
    ...     return t.item()
    >>> run_ranks(fn, 2)
    [3.0, 3.0]

Mirrors: ``torch.distributed``.
"""

from __future__ import annotations

from hookgrad.distributed import _pg_methods, algorithms
from hookgrad.distributed._composite import (
    all_reduce_coalesced,
    all_to_all,
    new_subgroups,
    new_subgroups_by_enumeration,
    all_gather_coalesced,
    all_gather_into_tensor,
    all_gather_single,
    all_to_all_single,
    gather,
    gather_object,
    monitored_barrier,
    reduce_scatter,
    reduce_scatter_single,
    reduce_scatter_tensor,
    scatter,
    scatter_object_list,
)
from hookgrad.distributed._names import (
    AllreduceCoalescedOptions,
    AllreduceOptions,
    AllToAllOptions,
    Backend,
    BackendConfig,
    BarrierOptions,
    BroadcastOptions,
    DebugLevel,
    GatherOptions,
    ReduceOptions,
    ReduceScatterOptions,
    ScatterOptions,
    default_pg_timeout,
    get_debug_level,
    get_default_backend_for_device,
    get_node_local_rank,
    is_available,
    is_backend_available,
    is_gloo_available,
    is_mpi_available,
    is_nccl_available,
    is_torchelastic_launched,
    is_ucc_available,
    is_xccl_available,
    set_debug_level,
    set_debug_level_from_env,
    supports_complex,
)
from hookgrad.distributed._ddp_c10d import Logger, Reducer, _register_comm_hook
from hookgrad.distributed._debug import breakpoint, log, record_comm
from hookgrad.distributed._file_store import FileStore
from hookgrad.distributed._gloo import ProcessGroupGloo
from hookgrad.distributed._tcp_store import TCPStore
from hookgrad.distributed._p2p import (
    P2POp,
    batch_isend_irecv,
    irecv,
    isend,
    recv,
    recv_object_list,
    send,
    send_object_list,
)
from hookgrad.distributed._protocol import DistBackendError, DistError
from hookgrad.distributed._split import shrink_group, split_group
from hookgrad.distributed._store import (
    BuiltinCommHookType,
    DistNetworkError,
    DistStoreError,
    HashStore,
    PrefixStore,
    QueueEmptyError,
    Store,
)
from hookgrad.distributed._threads import ThreadStore
from hookgrad.distributed._work import Work
from hookgrad.distributed.collectives import (
    ReduceOp,
    all_gather,
    all_gather_object,
    all_reduce,
    barrier,
    broadcast,
    broadcast_object_list,
    reduce,
    reduce_op,
)
from hookgrad.distributed.grad_bucket import GradBucket
from hookgrad.distributed.process_group import (
    GroupMember,
    ProcessGroup,
    destroy_process_group,
    _get_default_group,
    get_backend,
    get_backend_config,
    get_global_rank,
    get_group_rank,
    get_pg_count,
    get_process_group_ranks,
    get_rank,
    get_world_size,
    group,
    init_process_group,
    is_initialized,
    new_group,
    progress,
)

from hookgrad.distributed import distributed_c10d  # noqa: E402 - PyTorch's module path

# the function shadows its module as a package attribute, as in PyTorch
from hookgrad.distributed.rendezvous import register_rendezvous_handler, rendezvous  # noqa: E402

_pg_methods.install()  # ProcessGroup.allreduce/allgather/... (comm hooks call them)

__all__ = [
    "BuiltinCommHookType", "DistNetworkError", "DistStoreError", "HashStore", "PrefixStore",
    "QueueEmptyError", "Store", "all_reduce_coalesced", "all_to_all", "distributed_c10d",
    "get_backend_config", "new_subgroups", "new_subgroups_by_enumeration",
    "AllToAllOptions", "AllreduceCoalescedOptions", "AllreduceOptions", "Backend",
    "BarrierOptions", "BroadcastOptions", "DebugLevel", "DistBackendError", "DistError",
    "GatherOptions", "GradBucket", "GroupMember", "ProcessGroup", "ReduceOp", "ReduceOptions",
    "ReduceScatterOptions", "ScatterOptions", "ThreadStore", "Work", "algorithms", "all_gather",
    "all_gather_into_tensor", "all_gather_object", "all_reduce", "all_to_all_single", "barrier",
    "broadcast", "broadcast_object_list", "default_pg_timeout", "destroy_process_group",
    "gather", "gather_object", "get_backend", "get_debug_level",
    "get_default_backend_for_device", "get_global_rank", "get_group_rank",
    "get_node_local_rank", "get_pg_count", "get_process_group_ranks", "get_rank",
    "get_world_size", "group", "init_process_group", "is_available", "is_backend_available",
    "is_gloo_available", "is_initialized", "is_mpi_available", "is_nccl_available",
    "is_torchelastic_launched", "is_ucc_available", "is_xccl_available", "monitored_barrier",
    "new_group", "progress", "reduce", "reduce_op", "reduce_scatter", "reduce_scatter_tensor",
    "scatter", "scatter_object_list", "set_debug_level", "set_debug_level_from_env",
    "supports_complex", "P2POp", "batch_isend_irecv", "irecv", "isend", "recv",
    "recv_object_list", "send", "send_object_list", "all_gather_coalesced",
    "all_gather_single", "reduce_scatter_single", "shrink_group", "split_group",
]

# Submodules PyTorch's torch.distributed exposes as attributes (importable modules whose
# sharding entry points raise NotImplementedError; libraries import them at load time)
from hookgrad.distributed import constants, device_mesh, fsdp, optim, tensor  # noqa: E402,F401
from hookgrad.distributed import autograd, rpc  # noqa: E402,F401  (attributes after import, as PyTorch's)
from hookgrad.distributed.device_mesh import DeviceMesh, init_device_mesh  # noqa: E402,F401
from hookgrad.distributed import c10d_logger, config, logging_handlers, utils  # noqa: E402,F401
from hookgrad.distributed.remote_device import _remote_device  # noqa: E402,F401
from hookgrad.distributed import remote_device  # noqa: E402,F401

from hookgrad.compile.core.symbolic import SymInt as _SymInt  # noqa: E402

RankType = int | _SymInt  # a rank: an int, or symbolic under compile (PyTorch's alias)
