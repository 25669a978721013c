"""hookgrad-specific DDP and process-group behaviour (threads backend; no PyTorch needed)."""

from __future__ import annotations

import pickle
import sys
import warnings
from datetime import timedelta

import numpy as np
import pytest

import hookgrad
import hookgrad.distributed as dist
from hookgrad.distributed.algorithms.ddp_comm_hooks import default_hooks, powerSGD_hook
from hookgrad.nn.parallel import DistributedDataParallel as DDP
from hookgrad.nn.parallel._buckets import MAXSIZE, compute_bucket_assignment_by_size
from hookgrad.testing.distributed import run_ranks, run_ranks_errors
from tests.distributed.scenarios import batch, loss_of, make_model


def test_bucket_assignment_examples_of_the_spec():
    ts = [hookgrad.zeros(160000) if i % 2 == 0 else hookgrad.zeros(400) for i in range(8)]
    assert compute_bucket_assignment_by_size(ts, [MAXSIZE])[0] == [list(range(8))]
    assert compute_bucket_assignment_by_size(ts, [2**20, 25 * 2**20])[0] == \
        [[0, 1, 2], [3, 4, 5, 6, 7]]
    assert compute_bucket_assignment_by_size(ts, [2**19])[0] == \
        [[0], [1, 2], [3, 4], [5, 6], [7]]
    mixed = [hookgrad.zeros(2), hookgrad.zeros(2, dtype=hookgrad.float64), hookgrad.zeros(2)]
    assert compute_bucket_assignment_by_size(mixed, [MAXSIZE])[0] == [[0, 2], [1]]


def test_hook_wrong_on_one_rank_fails_every_rank_without_a_hang():
    def fn(rank, world):
        ddp = DDP(make_model(hookgrad, rank))
        hook = (lambda s, b: b.buffer()) if rank == 1 else default_hooks.allreduce_hook
        ddp.register_comm_hook(None, hook)
        x, y = batch(hookgrad, rank)
        loss_of(hookgrad, ddp, x, y).backward()

    errors = run_ranks_errors(fn, 2, timeout=timedelta(seconds=20))
    assert isinstance(errors[1], RuntimeError)
    assert "must return a hookgrad.futures.Future object, but got" in str(errors[1])
    # rank 0's all-reduce fails (its then-callback wraps the engine error, as torch does)
    assert isinstance(errors[0], RuntimeError) and "rank 1 failed" in str(errors[0])


def test_comm_hook_registered_after_a_step_is_used_from_the_next_one():
    def fn(rank, world):
        calls = []
        ddp = DDP(make_model(hookgrad, rank))
        x, y = batch(hookgrad, rank)
        loss_of(hookgrad, ddp, x, y).backward()

        def hook(state, bucket):
            calls.append(bucket.index())
            return default_hooks.allreduce_hook(state, bucket)

        ddp.register_comm_hook(None, hook)
        loss_of(hookgrad, ddp, x, y).backward()
        return calls

    assert run_ranks(fn, 2) == [[0], [0]]


def test_find_unused_without_unused_parameters_warns_once():
    def fn(rank, world):
        ddp = DDP(make_model(hookgrad, rank), find_unused_parameters=True)
        x, y = batch(hookgrad, rank)
        loss_of(hookgrad, ddp, x, y).backward()
        loss_of(hookgrad, ddp, x, y).backward()

    # Recorded here, around both rank threads: `warnings.catch_warnings` swaps process-wide
    # state, so one per thread races (a thread leaving it restores the other's filters).
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        run_ranks(fn, 2)
    found = [w for w in seen if "did not find any unused parameters" in str(w.message)]
    assert len(found) == 2 and all(w.category is UserWarning for w in found)  # once per rank


def test_powersgd_state_pickles_without_its_group():
    def fn(rank, world):
        state = powerSGD_hook.PowerSGDState(dist.group.WORLD, start_powerSGD_iter=2)
        back = pickle.loads(pickle.dumps(state))
        return back.process_group is dist.group.WORLD and back.start_powerSGD_iter == 2

    # Recorded around both rank threads (see test_find_unused_..._warns_once).
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        assert run_ranks(fn, 2) == [True, True]
    texts = [str(w.message) for w in seen if w.category is UserWarning]
    assert sum("Process group is not serializable" in t for t in texts) == 2
    assert sum("default group" in t for t in texts) == 2


def test_orthogonalisation_gives_orthonormal_columns():
    rng = np.random.default_rng(0)
    for r in (1, 2, 4):
        m = rng.normal(size=(3, 10, r))
        powerSGD_hook._orthogonalize(m)
        for b in range(3):
            np.testing.assert_allclose(m[b].T @ m[b], np.eye(r), atol=1e-10)


def test_work_api_and_async_collectives():
    def fn(rank, world):
        t = hookgrad.tensor([1.0 + rank])
        work = dist.all_reduce(t, async_op=True)
        assert work.wait(timeout=timedelta(seconds=5)) is True
        assert work.result()[0] is t and work.get_future().value()[0] is t
        w2 = dist.barrier(async_op=True)
        w2.wait()
        return t.item(), t._version

    assert run_ranks(fn, 2) == [(3.0, 1), (3.0, 1)]


def test_unknown_backend_and_gpu_backends_say_what_to_use():
    with pytest.raises(ValueError, match="Invalid backend"):
        dist.init_process_group("carrier-pigeon")
    with pytest.raises(ValueError, match="use 'gloo', 'mpi' or 'threads'"):
        dist.init_process_group("nccl")
    with pytest.raises(ValueError, match="mpiexec -n N"):  # processes need an MPI launch
        dist.init_process_group("gloo", rank=0, world_size=2)
    assert not dist.is_initialized()


def test_mpi_backend_without_mpi4py_says_how_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "mpi4py", None)
    with pytest.raises(ImportError, match=r"pip install 'hookgrad\[mpi\]'"):
        dist.init_process_group("mpi")
    assert not dist.is_initialized()


def test_ddp_refuses_device_ids_and_needs_a_group():
    with pytest.raises(ValueError, match="not been initialized"):
        DDP(hookgrad.nn.Linear(2, 2))

    def fn(rank, world):
        with pytest.raises(ValueError, match="device_ids"):
            DDP(hookgrad.nn.Linear(2, 2), device_ids=[0])

    run_ranks(fn, 2)


def test_data_parallel_is_a_transparent_wrapper():
    lin = hookgrad.nn.Linear(3, 2)
    dp = hookgrad.nn.DataParallel(lin)
    x = hookgrad.ones(4, 3)
    assert hookgrad.equal(dp(x), lin(x))
    assert sorted(dp.state_dict()) == ["module.bias", "module.weight"]
    assert hookgrad.nn.parallel.DataParallel is hookgrad.nn.DataParallel


def test_threads_backend_without_a_store_meets_by_group_name():
    import threading

    out = [None, None]

    def body(rank):
        dist.init_process_group("threads", rank=rank, world_size=2,
                                timeout=timedelta(seconds=20))
        t = hookgrad.tensor([rank + 1.0])
        dist.all_reduce(t)
        out[rank] = t.item()
        dist.destroy_process_group()

    for _ in range(2):  # a second world after the first was destroyed
        threads = [threading.Thread(target=body, args=(r,)) for r in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(30)
        assert out == [3.0, 3.0]


def test_reduce_writes_only_the_destination():
    def fn(rank, world):
        t = hookgrad.tensor([rank + 1.0])
        dist.reduce(t, dst=1)
        u = hookgrad.tensor([rank + 1.0])
        work = dist.reduce(u, dst=0, async_op=True)
        work.wait()
        return t.item(), u.item(), work.is_completed()

    assert run_ranks(fn, 2) == [(1.0, 3.0, True), (3.0, 2.0, True)]


def test_bucket_cap_mb_list_sets_each_bucket_cap():
    def fn(rank, world):
        model = make_model(hookgrad, rank, sizes=(200, 200, 200, 200))
        ddp = DDP(model, bucket_cap_mb_list=[0.1, 0.2])
        for it in range(2):
            x, _ = batch(hookgrad, rank, it, dim=200)
            ddp(x).sum().backward()
        return ddp._get_bucket_indices()

    # ready order 5 4 3 2 1 0 (160 KB weights, 800 B biases): bucket 0 closes at 0.1 MB after
    # w2; bucket 1 (0.2 MB cap) holds b1 w1 b0 and closes when w0 crosses the cap
    assert run_ranks(fn, 2) == [[[5, 4], [3, 2, 1, 0]]] * 2
