"""``torch.distributed``'s public names: each present in ``hookgrad.distributed`` or listed
as deliberately absent with a reason; behaviour observable without a process group compared
with PyTorch 2.13 (enum members and values, Backend names, errors before init)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from datetime import timedelta

import pytest

import hookgrad
import hookgrad.distributed as dist
from hookgrad.testing.distributed import run_ranks
from tests.conftest import load_torch

# name -> why hookgrad does not have it
ABSENT = {
    "GroupName": "C++ type alias",
    "logging": "a leaked import of PyTorch's implementation (the logging module)",
    "sys": "a leaked import of torch.distributed", "timedelta": "a leaked import",
    "torch": "a leaked import", "traceback": "a leaked import", "typing": "a leaked import",
}


def test_every_public_name_is_present_or_listed_absent():
    torch = load_torch()
    # a fresh interpreter: submodules other tests import (fsdp, tensor, ...) become attributes
    code = "import torch.distributed as d; print(' '.join(n for n in dir(d) if n[0] != '_'))"
    names = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                           timeout=120, check=True).stdout.split()
    neither = [n for n in names if not hasattr(dist, n) and n not in ABSENT]
    assert not neither, f"neither present nor listed absent: {neither}"
    stale = [n for n in ABSENT if hasattr(dist, n)]
    assert not stale, f"listed absent but present: {stale}"
    present = sum(hasattr(dist, n) for n in names)
    assert present >= 76 and torch is not None


def test_reduce_op_members_values_and_equality_match_pytorch():
    td = load_torch().distributed
    ours = {k: int(v) for k, v in dist.ReduceOp.RedOpType.__members__.items()}
    assert ours == {k: int(v) for k, v in td.ReduceOp.RedOpType.__members__.items()}
    for name in ours:
        assert int(getattr(dist.ReduceOp, name)) == int(getattr(td.ReduceOp, name))
        assert str(getattr(dist.ReduceOp, name)) == str(getattr(td.ReduceOp, name))
    assert dist.ReduceOp(dist.ReduceOp.MAX) == dist.ReduceOp.MAX
    assert td.ReduceOp(td.ReduceOp.MAX) == td.ReduceOp.MAX
    assert [dist.supports_complex(getattr(dist.ReduceOp, n)) for n in ours] == \
        [td.supports_complex(getattr(td.ReduceOp, n)) for n in ours]
    with pytest.warns(FutureWarning, match="reduce_op` is deprecated"):
        assert dist.reduce_op.SUM == dist.ReduceOp.SUM


@pytest.mark.parametrize("name", ["gloo", "GLOO", "Gloo", "mpi", "nccl", "undefined", "fake",
                                  "carrier-pigeon"])
def test_backend_names_match_pytorch(name):
    td = load_torch().distributed
    assert dist.Backend(name) == td.Backend(name) and isinstance(dist.Backend(name), str)


_PRISTINE_BACKEND = """
import json, torch.distributed as td
print(json.dumps({a: getattr(td.Backend, a) for a in ("backend_list",
      "default_device_backend_map", "backend_capability")}))
"""


def _pristine_torch_backend_tables():
    # Importing parts of torch.testing registers plugin backends (the fake process group adds
    # 'hpu': 'fake'), and other test files do import them: read torch's own tables in a fresh
    # process so this comparison does not depend on test order.
    import json

    out = subprocess.run([sys.executable, "-c", _PRISTINE_BACKEND], capture_output=True,
                         text=True, check=True, timeout=120)
    return json.loads(out.stdout)


def test_backend_class_attributes_and_errors_match_pytorch():
    td = load_torch().distributed
    for attr in ("UNDEFINED", "GLOO", "NCCL", "UCC", "MPI", "XCCL", "FAKE"):
        assert getattr(dist.Backend, attr) == getattr(td.Backend, attr), attr
    for attr, theirs in _pristine_torch_backend_tables().items():
        assert getattr(dist.Backend, attr) == theirs, attr
    for bad in (3, None):
        with pytest.raises(ValueError) as ours:
            dist.Backend(bad)
        with pytest.raises(ValueError) as theirs:
            td.Backend(bad)
        assert str(ours.value) == str(theirs.value)
    assert dist.get_default_backend_for_device("cpu") == td.get_default_backend_for_device("cpu")
    with pytest.raises(ValueError, match="Default backend not registered for device : meta"):
        dist.get_default_backend_for_device("meta")


def test_debug_level_and_environment_match_pytorch(monkeypatch):
    td = load_torch().distributed
    assert list(dist.DebugLevel.__members__) == list(td.DebugLevel.__members__)
    assert str(dist.get_debug_level()) == str(td.get_debug_level()) == "DebugLevel.OFF"
    monkeypatch.setenv("TORCH_DISTRIBUTED_DEBUG", "bad")
    for lib in (dist, td):
        with pytest.raises(ValueError, match="must be OFF, INFO, or DETAIL"):
            lib.set_debug_level_from_env()
    monkeypatch.setenv("TORCH_DISTRIBUTED_DEBUG", "detail")
    dist.set_debug_level_from_env()
    assert dist.get_debug_level() == dist.DebugLevel.DETAIL
    dist.set_debug_level(dist.DebugLevel.OFF)


def test_predicates_and_defaults():
    td = load_torch().distributed
    assert dist.is_available() and dist.is_gloo_available() and dist.is_backend_available("gloo")
    assert not dist.is_nccl_available() and not dist.is_ucc_available()
    assert not dist.is_xccl_available() and not dist.is_backend_available("nccl")
    assert dist.is_torchelastic_launched() == td.is_torchelastic_launched()
    assert dist.is_initialized() == td.is_initialized() is False
    assert dist.default_pg_timeout == td.default_pg_timeout
    assert dist.GroupMember.NON_GROUP_MEMBER == td.GroupMember.NON_GROUP_MEMBER
    assert dist.get_node_local_rank(fallback_rank=3) == td.get_node_local_rank(fallback_rank=3)


@pytest.mark.parametrize("call", [
    lambda lib: lib.distributed.get_rank(), lambda lib: lib.distributed.get_world_size(),
    lambda lib: lib.distributed.get_backend(), lambda lib: lib.distributed.barrier(),
    lambda lib: lib.distributed.all_reduce(lib.ones(2)),
    lambda lib: lib.distributed.broadcast(lib.ones(2), 0),
    lambda lib: lib.distributed.new_group(),
    lambda lib: lib.distributed.all_gather_object([None], 1),
    lambda lib: lib.distributed.monitored_barrier(),
    lambda lib: lib.distributed.get_process_group_ranks(None),
    lambda lib: lib.distributed.destroy_process_group(),
    lambda lib: lib.distributed.init_process_group("carrier-pigeon"),
    lambda lib: lib.distributed.init_process_group(3),
    lambda lib: lib.distributed.get_node_local_rank(),
])
def test_calls_before_init_raise_pytorchs_types(call, monkeypatch):
    monkeypatch.delenv("LOCAL_RANK", raising=False)
    torch = load_torch()
    with pytest.raises(Exception) as theirs:
        call(torch)
    with pytest.raises(Exception) as ours:
        call(hookgrad)
    assert type(ours.value).__name__ == type(theirs.value).__name__
    assert not dist.is_initialized()


def test_error_hierarchy_matches_pytorch():
    td = load_torch().distributed
    for name in ("DistError", "DistBackendError", "DistStoreError", "DistNetworkError",
                 "QueueEmptyError"):
        ours = [c.__name__ for c in getattr(dist, name).__mro__[:-3]]
        theirs = [c.__name__ for c in getattr(td, name).__mro__[:-3]]
        assert ours == theirs, name


def test_hash_store_like_pytorch():
    td = load_torch().distributed
    for lib in (dist, td):
        s = lib.HashStore()
        s.set("a", "1")
        assert (s.get("a"), s.add("n", 2), s.add("n", 3), s.num_keys()) == (b"1", 2, 5, 2)
        assert s.check(["a"]) and s.delete_key("a") and s.num_keys() == 1
        s.set_timeout(timedelta(milliseconds=50))
        with pytest.raises(lib.DistStoreError):
            s.get("missing")
        p = lib.PrefixStore("pre", s)
        p.set("k", b"v")
        assert s.get("pre/k") == b"v"


def test_gloo_runs_on_the_threads_engine_from_rank_threads():
    def fn(rank, world):
        return dist.get_backend(), dist.get_backend_config()

    # run_ranks initialises "threads"; gloo from rank threads meets by group name instead
    assert run_ranks(fn, 2)[0] == ("threads", "cpu:threads")
    out = [None, None]

    def body(rank):
        dist.init_process_group("gloo", rank=rank, world_size=2, group_name="gloo-test",
                                timeout=timedelta(seconds=30))
        t = hookgrad.tensor([rank + 1.0])
        dist.all_reduce(t)
        out[rank] = (dist.get_backend(), t.item())
        dist.destroy_process_group()

    import threading

    threads = [threading.Thread(target=body, args=(r,)) for r in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert out == [("gloo", 3.0), ("gloo", 3.0)]


def test_gloo_without_a_launcher_is_a_one_rank_world():
    code = ("import hookgrad, hookgrad.distributed as d; d.init_process_group('gloo'); "
            "t = hookgrad.ones(2); d.all_reduce(t); "
            "print(d.get_backend(), d.get_world_size(), d.get_rank(), t.tolist()); "
            "d.destroy_process_group()")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PMI_", "OMPI_", "PMIX"))}
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    proc = subprocess.run(["python3", "-c", code], capture_output=True, text=True, timeout=120,
                          env={**env, "PYTHONPATH": root}, cwd=root, check=False)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["gloo", "1", "0", "[1.0,", "1.0]"]


def test_a_dead_peer_process_is_noticed_by_pid():
    pytest.importorskip("mpi4py")
    from hookgrad.distributed._mpi import MpiComm, import_mpi

    comm = MpiComm(import_mpi().COMM_SELF.Dup(), [0], 0, timeout=5)
    child = subprocess.Popen(["true"])
    while child.poll() is None:
        time.sleep(0.01)
    comm.global_ranks, comm.pids = [0, 1], {1: child.pid}  # as if rank 1 were that process
    with pytest.raises(dist.DistBackendError, match=rf"rank 1 \(pid {child.pid}\) died"):
        comm.check_peers(3, "all_reduce")
    comm.close()
