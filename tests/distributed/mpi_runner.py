"""Run DDP scenarios under ``mpiexec -n N python mpi_runner.py OUT [names...]`` (MPI backend).

Each rank writes ``OUT.rank<r>.json``: ``{name: {"ok": bool, "result" | "error": ...}}``.
Special modes exercise faults that end a rank: ``--fault raise`` (rank 1 raises before a
collective) and ``--fault skip`` (rank 1 skips a collective and waits at a later one).
"""

from __future__ import annotations

import json
import os
import sys
import traceback
from datetime import timedelta

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

import hookgrad  # noqa: E402
import hookgrad.distributed as dist  # noqa: E402
from tests.distributed.scenarios import SCENARIOS  # noqa: E402


def run_fault(kind: str, out: str) -> None:
    dist.init_process_group("mpi", timeout=timedelta(seconds=3))
    rank = dist.get_rank()
    result: dict = {}
    try:
        if kind == "raise" and rank == 1:
            raise ValueError("rank 1 fails on purpose")
        if kind == "skip" and rank == 1:
            dist.barrier(async_op=True)  # a different collective; never waited on
            dist.broadcast(hookgrad.ones(2), src=0)
        else:
            dist.all_reduce(hookgrad.ones(2))
        result = {"ok": True}
    except Exception as exc:  # noqa: BLE001
        result = {"ok": False, "type": type(exc).__name__, "error": str(exc)}
    with open(f"{out}.rank{rank}.json", "w") as f:
        json.dump(result, f)
    if not result["ok"] and kind == "raise" and rank == 1:
        raise SystemExit(3)


def main() -> None:
    out, names = sys.argv[1], sys.argv[2:]
    if names and names[0] == "--fault":
        run_fault(names[1], out)
        return
    dist.init_process_group("mpi", timeout=timedelta(seconds=20))
    rank, world = dist.get_rank(), dist.get_world_size()
    results: dict = {}
    for name in names or list(SCENARIOS):
        try:
            results[name] = {"ok": True, "result": SCENARIOS[name](hookgrad, rank, world)}
        except Exception as exc:  # noqa: BLE001 - reported to the test
            results[name] = {"ok": False, "error": f"{type(exc).__name__}: {exc}",
                             "trace": traceback.format_exc()}
        dist.barrier()
    with open(f"{out}.rank{rank}.json", "w") as f:
        json.dump(results, f, default=str)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
