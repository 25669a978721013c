"""contracts/distributed.md §11.5 on the in-process threads backend (2 ranks)."""

from __future__ import annotations

from datetime import timedelta

import pytest

import hookgrad
import hookgrad.distributed as dist
from hookgrad.testing.distributed import run_ranks, run_ranks_errors
from tests.distributed._compare import scenario_warnings
from tests.distributed.expectations import check
from tests.distributed.scenarios import SCENARIOS


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_scenario(name):
    # A scenario that silences DDP's find_unused warning does it with `catch_warnings` inside
    # each rank thread; those swap process-wide state and race (a thread leaving restores
    # pytest's "error" filter while the other still warns). The same filter set here, around
    # both threads, is what any of those restores brings back.
    with scenario_warnings():
        results = run_ranks(lambda rank, world: SCENARIOS[name](hookgrad, rank, world), 2)
    check(name, results)


def test_a_raising_rank_fails_its_peers_fast_and_is_reraised():
    def fn(rank, world):
        if rank == 1:
            raise ValueError("rank 1 fails on purpose")
        dist.all_reduce(hookgrad.ones(2))

    errors = run_ranks_errors(fn, 2, timeout=timedelta(seconds=60))
    assert isinstance(errors[1], ValueError)
    assert isinstance(errors[0], dist.DistBackendError)
    assert "rank 1 failed" in str(errors[0]) and "rank 1 fails on purpose" in str(errors[0])
    with pytest.raises(ValueError, match="rank 1 fails on purpose"):
        run_ranks(fn, 2)


def test_a_missing_rank_is_named_by_the_timeout():
    def fn(rank, world):
        if rank == 0:
            dist.all_reduce(hookgrad.ones(2))

    errors = run_ranks_errors(fn, 2, timeout=timedelta(seconds=0.5))
    assert isinstance(errors[0], dist.DistBackendError) and errors[1] is None
    assert "timed out after 0.5 s waiting for rank 1" in str(errors[0])


def test_three_ranks_and_a_sub_group():
    def fn(rank, world):
        sub = dist.new_group([0, 2])
        t = hookgrad.tensor([float(rank)])
        if rank == 1:
            assert sub is dist.GroupMember.NON_GROUP_MEMBER
            return None
        dist.all_reduce(t, group=sub)
        return (t.item(), dist.get_world_size(sub), dist.get_rank(sub))

    assert run_ranks(fn, 3) == [(2.0, 2, 0), None, (2.0, 2, 1)]


def test_default_group_is_per_thread_and_destroyed():
    assert not dist.is_initialized()
    assert run_ranks(lambda r, n: (dist.is_initialized(), dist.get_backend()), 2) == \
        [(True, "threads")] * 2
    assert not dist.is_initialized()
    with pytest.raises(ValueError, match="has not been initialized"):
        dist.get_rank()


def test_threads_backend_rejects_a_bad_store_or_rank():
    with pytest.raises(ValueError, match="ThreadStore"):
        dist.init_process_group("threads", rank=0, world_size=1, store=object())
    with pytest.raises(ValueError, match="rank"):
        dist.init_process_group("threads", rank=2, world_size=2)
    with pytest.raises(ValueError, match="world_size"):
        dist.init_process_group("threads", rank=0, world_size=3, store=dist.ThreadStore(2))
    assert not dist.is_initialized()


def test_an_unwaited_mismatched_collective_is_reported_not_a_timeout():
    def fn(rank, world):
        if rank == 1:
            dist.barrier(async_op=True)  # never waited on
            dist.broadcast(hookgrad.ones(2), src=0)
        else:
            dist.all_reduce(hookgrad.ones(2))

    errors = run_ranks_errors(fn, 2, timeout=timedelta(seconds=20))
    for exc in errors:
        assert isinstance(exc, dist.DistBackendError)
        assert str(exc).startswith("collective mismatch: rank 0 called all_reduce")
        assert "rank 1 called barrier" in str(exc)


def test_a_receive_nobody_answers_is_named_by_the_timeout():
    def fn(rank, world):
        if rank == 0:
            dist.recv(hookgrad.zeros(2), src=1, tag=3)

    errors = run_ranks_errors(fn, 2, timeout=timedelta(seconds=0.5))
    assert isinstance(errors[0], dist.DistBackendError) and errors[1] is None
    assert str(errors[0]) == "[rank 0] recv (tag 3) timed out after 0.5 s waiting for rank 1"
