"""DDP's side of `Join` (uneven inputs): the collectives one DDP iteration issues, and their
shadows on a rank that has joined.

One iteration of a rank still training, inside an enabled `Join` (in this order):
1. `Join.notify_join_context`: all-reduce of 1 (the number of ranks still training);
2. buffer sync, when DDP broadcasts buffers: all-reduce MAX of the ranks that may serve as
   source (the training ones), then the broadcasts from that rank;
3. all-reduce of this rank's ``require_backward_grad_sync`` (1/0);
4. backward: one reduction per bucket (default all-reduce or the comm hook), plus the
   unused-parameter bitmap with ``find_unused_parameters``.
A joined rank answers 1 with its loop's all-reduce of 0 and 2-4 with `DDPJoinHook.main_hook`:
the same collectives, contributing zeros. Once all joined, `DDPJoinHook.post_hook` broadcasts
the parameters and buffers of the last rank to join to every rank (PyTorch's behaviour).
"""

from __future__ import annotations

from typing import Any

import numpy as np

import hookgrad.distributed as dist
from hookgrad._tensor import Tensor
from hookgrad.autograd.grad_mode import no_grad
from hookgrad.distributed.algorithms.join import Join, JoinHook
from hookgrad.distributed.grad_bucket import GradBucket


def find_common_rank(ddp: Any, candidate: bool) -> int:
    """The highest rank for which ``candidate`` holds (an all-reduce MAX).

    Raises:
        ValueError: No rank is a candidate.
    """
    me = dist.get_rank(ddp.process_group)
    t = Tensor._make(np.array([me if candidate else -1], dtype=np.int64))
    dist.all_reduce(t, op=dist.ReduceOp.MAX, group=ddp.process_group)
    rank = int(t.item())
    if rank == -1:
        raise ValueError("BUG! Expected rank_cond to be true for at least one process.")
    return rank


def sync_buffers_from(ddp: Any, group_rank: int) -> None:
    src = ddp.process_group._global_ranks()[group_rank]
    with no_grad():
        for b in ddp._buffers_to_sync:
            dist.broadcast(b.detach(), src, group=ddp.process_group)


def pre_forward(ddp: Any, grad_on: bool) -> bool:
    """Steps 1-3 for a training rank inside an enabled `Join`; returns whether buffers were
    synchronised here (so DDP's forward skips its own broadcast)."""
    work = Join.notify_join_context(ddp)
    active = ddp.process_group.size()
    if work is not None:
        work.wait()
        active = int(work.result()[0].item())
    if grad_on:  # gradients are averaged over the ranks still training, unless told not to
        ddp.reducer.rebuild_buckets()
        ddp.reducer.divisor = ddp.process_group.size() if \
            ddp._divide_by_initial_world_size else active
    synced = False
    if ddp.broadcast_buffers and ddp._buffers_to_sync and ddp.process_group.size() > 1:
        sync_buffers_from(ddp, find_common_rank(ddp, True))
        synced = True
    flag = Tensor._make(np.array([1.0 if ddp.require_backward_grad_sync else 0.0]))
    dist.all_reduce(flag, group=ddp.process_group)
    return synced


class DDPJoinHook(JoinHook):
    """Shadows DDP's collectives on a joined rank; syncs the final model when all joined.

    Mirrors: ``torch.nn.parallel.distributed._DDPJoinHook``.
    """

    def __init__(self, ddp: Any, divide_by_initial_world_size: bool) -> None:
        self.ddp = ddp
        ddp._divide_by_initial_world_size = divide_by_initial_world_size

    def main_hook(self) -> None:
        """Steps 2-4 of one iteration, contributing zeros."""
        ddp = self.ddp
        ddp.reducer.rebuild_buckets()
        if ddp.broadcast_buffers and ddp._buffers_to_sync and ddp.process_group.size() > 1:
            sync_buffers_from(ddp, find_common_rank(ddp, False))
        flag = Tensor._make(np.zeros(1))
        dist.all_reduce(flag, group=ddp.process_group)
        if not flag.item():
            return  # every training rank is inside no_sync(): no backward reduction
        _zero_bucket_reductions(ddp)
        if ddp.find_unused_parameters:
            used = Tensor._make(np.zeros(len(ddp.reducer.params), dtype=np.int32))
            dist.all_reduce(used, op=dist.ReduceOp.MAX, group=ddp.process_group)

    def post_hook(self, is_last_joiner: bool) -> None:
        """Broadcast the last joiner's parameters and buffers to every rank."""
        ddp = self.ddp
        src = find_common_rank(ddp, is_last_joiner)
        with no_grad():
            for t in [*ddp.reducer.params, *ddp._buffers_to_sync]:
                dist.broadcast(t.detach(), ddp.process_group._global_ranks()[src],
                               group=ddp.process_group)


def _zero_bucket_reductions(ddp: Any) -> None:
    """One reduction per bucket, in bucket order, on zeros (comm hook included)."""
    reducer, futures = ddp.reducer, []
    for k, bucket in enumerate(reducer.buckets):
        buffer = Tensor._make(np.zeros_like(bucket.flat))
        if reducer.comm_hook is None:
            work = dist.all_reduce(buffer, group=reducer.group, async_op=True)
            futures.append(work.get_future())
        else:
            grads = [Tensor._make(np.zeros_like(s)) for s in bucket.slots]
            gb = GradBucket(k, buffer, grads, list(bucket.params), k == len(reducer.buckets) - 1)
            futures.append(reducer.comm_hook(reducer.comm_state, gb))
    for fut in futures:
        fut.wait()
