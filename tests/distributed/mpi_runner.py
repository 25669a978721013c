"""Run DDP scenarios under ``mpiexec -n N python mpi_runner.py OUT [names...]`` (MPI backend),
or as 2 processes started by hand that meet through ``STORE_INIT`` (a ``tcp://`` or ``file://``
URL; ``STORE_RANK`` is the rank): the store engine.

Each rank writes ``OUT.rank<r>.json``: ``{name: {"ok": bool, "result" | "error": ...}}``.
Special modes exercise faults that end a rank: ``--fault raise`` (rank 1 raises before a
collective), ``--fault exit`` (rank 1 exits quietly), ``--fault kill`` (rank 1 is killed by
SIGKILL in a DDP backward) and ``--fault skip`` (rank 1 skips a collective and waits at a
later one), ``--fault p2p`` (rank 1 exits while rank 0 waits in ``recv`` from it). Result
files are rewritten after every scenario (atomically).
"""

from __future__ import annotations

import json
import os
import signal
import sys
import time
import traceback
from datetime import timedelta

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

import hookgrad  # noqa: E402
import hookgrad.distributed as dist  # noqa: E402
from tests.distributed.scenarios import SCENARIOS  # noqa: E402


def _write(out: str, rank: int, results: dict) -> None:
    """Replace this rank's result file atomically: a rank that fails later still leaves what
    it finished, and the test never reads a half-written file."""
    path = f"{out}.rank{rank}.json"
    with open(path + ".tmp", "w") as f:
        json.dump(results, f, default=str)
    os.replace(path + ".tmp", path)


def _kill_in_backward(rank: int) -> None:
    """DDP training where rank 1 SIGKILLs itself in its second backward (mid-step)."""
    model = hookgrad.nn.Linear(4, 2)
    ddp = hookgrad.nn.parallel.DistributedDataParallel(model)
    if rank == 1:
        model.weight.register_post_accumulate_grad_hook(
            lambda p: os.kill(os.getpid(), signal.SIGKILL) if step[0] == 1 else None)
    step = [0]
    for step[0] in range(3):
        ddp(hookgrad.ones(3, 4)).sum().backward()


def _init(seconds: float) -> None:
    if os.environ.get("STORE_INIT"):  # the store engine: processes started without mpiexec
        dist.init_process_group("gloo", init_method=os.environ["STORE_INIT"],
                                rank=int(os.environ["STORE_RANK"]), world_size=2,
                                timeout=timedelta(seconds=seconds))
    else:
        dist.init_process_group("mpi", timeout=timedelta(seconds=seconds))


def run_fault(kind: str, out: str) -> None:
    _init(float(os.environ.get("FAULT_TIMEOUT", "3")))
    rank = dist.get_rank()
    _write(out, rank, {"ok": False, "error": "started"})
    if kind == "raise" and rank == 1:
        raise ValueError("rank 1 fails on purpose")  # uncaught: the process exits with 1
    if kind in ("exit", "p2p") and rank == 1:
        sys.exit(0)  # leaves quietly, without the collective its peer waits in
    result: dict = {}
    start = time.monotonic()
    try:
        if kind == "kill":
            _kill_in_backward(rank)
        elif kind == "p2p":  # rank 1 exits above; rank 0 waits for its message
            dist.recv(hookgrad.zeros(2), src=1)
        elif kind == "skip" and rank == 1:
            dist.barrier(async_op=True)  # a different collective; never waited on
            dist.broadcast(hookgrad.ones(2), src=0)
        else:
            dist.all_reduce(hookgrad.ones(2))
        result = {"ok": True}
    except Exception as exc:  # noqa: BLE001
        result = {"ok": False, "type": type(exc).__name__, "error": str(exc)}
    result["seconds"] = time.monotonic() - start  # how long the failing collective took
    _write(out, rank, result)


def main() -> None:
    out, names = sys.argv[1], sys.argv[2:]
    if names and names[0] == "--fault":
        run_fault(names[1], out)
        return
    _init(float(os.environ.get("GROUP_TIMEOUT", "60")))  # the test scales it to the load
    rank, world = dist.get_rank(), dist.get_world_size()
    results: dict = {}
    _write(out, rank, results)
    for name in names or list(SCENARIOS):
        print(f"rank {rank}: {name}", file=sys.stderr, flush=True)  # names a hang, if any
        try:
            results[name] = {"ok": True, "result": SCENARIOS[name](hookgrad, rank, world)}
        except Exception as exc:  # noqa: BLE001 - reported to the test
            results[name] = {"ok": False, "error": f"{type(exc).__name__}: {exc}",
                             "trace": traceback.format_exc()}
        _write(out, rank, results)
        dist.barrier()  # a failure here propagates: the test shows the output and what ran
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
