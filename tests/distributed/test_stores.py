"""`FileStore` and `TCPStore` against PyTorch's: the same operations on both give the same
values, key counts and exception types; then across processes (a TCP master with clients in
other processes, two processes on one file) and through ``rendezvous`` URLs."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from datetime import timedelta

import pytest

import hookgrad.distributed as dist
from tests.conftest import load_torch

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _outcome(call):
    try:
        return ("ok", call())
    except Exception as exc:  # noqa: BLE001 - the exception type is the result
        return ("raised", type(exc).__name__)


def exercise(store):
    """Every store operation, with the edge cases c10d defines (results in order)."""
    store.set_timeout(timedelta(milliseconds=200))
    out = [store.num_keys()]
    store.set("a", "x")
    store.set("bin", b"\x00\xff")
    out += [store.get("a"), store.get("bin"), store.num_keys(), store.add("n", 3),
            store.add("n", -1), store.get("n"), store.num_keys()]
    out += [store.compare_set("a", "x", "y"), store.compare_set("a", "zz", "w"),
            store.compare_set("new", "", "v"), store.compare_set("new2", "q", "v")]
    out += [store.check(["a"]), store.check(["a", "nope"]), store.delete_key("a"),
            store.num_keys()]
    store.append("c", "ab")
    store.append("c", "cd")
    store.multi_set(["m1", "m2"], ["1", "2"])
    out += [store.get("c"), store.multi_get(["m1", "m2"]), store.num_keys()]
    out += [_outcome(lambda: store.wait(["zz"], timedelta(milliseconds=100))),
            _outcome(lambda: store.wait(["zz"])), _outcome(lambda: store.get("zz")),
            _outcome(lambda: store.get(5)), store.timeout]
    store.barrier("b", 1)
    out.append(store.has_extended_api())
    return out


def _stores(d, tmp_path, which):
    if which == "file":
        return d.FileStore(str(tmp_path / f"{d.__name__}.store"), 1)
    return d.TCPStore("127.0.0.1", 0, 1, True, timeout=timedelta(seconds=10))


@pytest.mark.parametrize("which", ["file", "tcp"])
def test_store_operations_match_pytorch(tmp_path, which):
    torch = load_torch()
    ours = exercise(_stores(dist, tmp_path, which))
    theirs = exercise(_stores(torch.distributed, tmp_path, which))
    assert ours == theirs
    # the wait's message names the key as c10d does
    with pytest.raises(dist.DistStoreError if which == "tcp" else RuntimeError,
                       match="wait timeout after 100ms, keys: /k" if which == "tcp"
                       else "Wait timeout"):
        _stores(dist, tmp_path, which).wait(
            ["k"], timedelta(milliseconds=100))


def test_file_store_delete_key_and_queues_as_c10d(tmp_path):
    store = dist.FileStore(str(tmp_path / "f"), 1)
    assert store.delete_key("missing") is True  # c10d's FileStore answers True
    with pytest.raises(NotImplementedError, match="queue support is not implemented"):
        store.queue_push("q", "1")
    store.set("k", "v")
    assert store.list_keys() == ["k"]
    clone = store.clone()
    assert clone.get("k") == b"v"


def test_tcp_store_queue_and_list_keys():
    store = dist.TCPStore("127.0.0.1", 0, 1, True, timeout=timedelta(seconds=5))
    store.queue_push("q", "1")
    store.queue_push("q", "2")
    assert store.queue_len("q") == 2 and store.queue_pop("q") == b"1"
    assert store.queue_pop("q", block=False) == b"2"
    with pytest.raises(dist.QueueEmptyError):
        store.queue_pop("q", block=False)
    store.set("b", "1")
    store.set("a", "2")
    assert store.list_keys() == ["a", "b"] and store.num_keys() == 3  # + the init key


def test_tcp_client_without_server_fails_with_a_network_error():
    with pytest.raises(dist.DistNetworkError, match="timed out after 300ms"):
        dist.TCPStore("127.0.0.1", 1, timeout=timedelta(milliseconds=300))
    torch = load_torch()
    master = dist.TCPStore("127.0.0.1", 0, 1, True)
    for d in (dist, torch.distributed):  # a second master on a port in use
        with pytest.raises(d.DistNetworkError):
            d.TCPStore("127.0.0.1", master.port, 1, True, timeout=timedelta(seconds=2))


def _run(code, *args):
    return subprocess.Popen([sys.executable, "-c", textwrap.dedent(code), *map(str, args)],
                            env={**os.environ, "PYTHONPATH": ROOT}, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


CLIENT = """
    import sys
    from datetime import timedelta
    import hookgrad.distributed as dist
    port, rank = int(sys.argv[1]), int(sys.argv[2])
    store = dist.TCPStore("127.0.0.1", port, 3, timeout=timedelta(seconds=60))
    store.set(f"from{rank}", str(rank * 10))
    total = store.add("sum", rank)
    store.barrier("done", 3)
    print(store.get("from1").decode(), store.get("from2").decode(), store.get("sum").decode())
"""


def test_tcp_store_across_processes():
    master = dist.TCPStore("127.0.0.1", 0, 3, True, timeout=timedelta(seconds=60),
                           wait_for_workers=False)
    procs = [_run(CLIENT, master.port, r) for r in (1, 2)]
    master.barrier("done", 3)
    outs = [p.communicate(timeout=60) for p in procs]
    assert all(p.returncode == 0 for p in procs), outs
    assert [o[0].split() for o in outs] == [["10", "20", "3"]] * 2
    assert master.get("sum") == b"3"


FILE_CLIENT = """
    import sys
    import hookgrad.distributed as dist
    store = dist.FileStore(sys.argv[1], 2)
    for _ in range(200):
        store.add("count", 1)
    store.set("child", "done")
"""


def test_file_store_across_processes_never_loses_an_add(tmp_path):
    path = str(tmp_path / "shared")
    store = dist.FileStore(path, 2)
    proc = _run(FILE_CLIENT, path)
    for _ in range(200):
        store.add("count", 1)
    store.set_timeout(timedelta(seconds=60))
    store.wait(["child"])
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    assert store.get("count") == b"400"


def test_rendezvous_urls(tmp_path, monkeypatch):
    torch = load_torch()
    path = tmp_path / "rdzv"
    for d in (dist, torch.distributed):
        store, rank, world = next(d.rendezvous(f"file://{path}{d.__name__}?rank=0&world_size=1"))
        assert (rank, world) == (0, 1)
        store.set("x", "1")
        assert store.get("x") == b"1"
    store, rank, world = next(dist.rendezvous("tcp://127.0.0.1:0?rank=0&world_size=1"))
    assert (rank, world) == (0, 1) and store.port > 0
    monkeypatch.setenv("MASTER_ADDR", "127.0.0.1")
    monkeypatch.setenv("MASTER_PORT", "0")
    store, rank, world = next(dist.rendezvous("env://", rank=0, world_size=1))
    assert (rank, world) == (0, 1)
    for d in (dist, torch.distributed):
        with pytest.raises(RuntimeError, match="No rendezvous handler for foo://"):
            d.rendezvous("foo://x")
        with pytest.raises(ValueError, match="rank"):
            next(d.rendezvous(f"file://{path}?world_size=1"))
    dist.register_rendezvous_handler("mine", lambda url, **kw: iter([("s", 0, 1)]))
    assert next(dist.rendezvous("mine://")) == ("s", 0, 1)
    with pytest.raises(RuntimeError, match="already registered"):
        dist.register_rendezvous_handler("mine", lambda url, **kw: None)
