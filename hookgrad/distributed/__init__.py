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

from hookgrad.distributed import algorithms
from hookgrad.distributed._protocol import DistBackendError
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
)
from hookgrad.distributed.grad_bucket import GradBucket
from hookgrad.distributed.process_group import (
    GroupMember,
    ProcessGroup,
    destroy_process_group,
    get_backend,
    get_rank,
    get_world_size,
    group,
    init_process_group,
    is_available,
    is_initialized,
    is_mpi_available,
    new_group,
    progress,
)

__all__ = [
    "DistBackendError", "GradBucket", "GroupMember", "ProcessGroup", "ReduceOp", "ThreadStore",
    "Work", "algorithms", "all_gather", "all_gather_object", "all_reduce", "barrier", "broadcast",
    "broadcast_object_list", "destroy_process_group", "get_backend", "get_rank",
    "get_world_size", "group", "init_process_group", "is_available", "is_initialized",
    "is_mpi_available", "new_group", "progress", "reduce",
]
