"""Run the oracle DDP scenarios on PyTorch (gloo, 2 spawned processes): ``python
torch_runner.py OUT``. Each rank writes ``OUT.rank<r>.json`` like `mpi_runner`."""

from __future__ import annotations

import json
import os
import socket
import sys
import traceback
from datetime import timedelta

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))


def _worker(rank: int, world: int, port: int, out: str) -> None:
    import torch
    import torch.distributed as dist

    from tests.distributed.scenarios import ORACLE, SCENARIOS

    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank,
                            world_size=world, timeout=timedelta(seconds=60))
    results: dict = {}
    for name in sorted(ORACLE):
        print(f"rank {rank}: {name}", file=sys.stderr, flush=True)  # names a hang, if any
        try:
            results[name] = {"ok": True, "result": SCENARIOS[name](torch, rank, world)}
        except Exception as exc:  # noqa: BLE001
            results[name] = {"ok": False, "error": f"{type(exc).__name__}: {exc}",
                             "trace": traceback.format_exc()}
        dist.barrier()
    with open(f"{out}.rank{rank}.json", "w") as f:
        json.dump(results, f, default=str)
    dist.destroy_process_group()


def main() -> None:
    import torch.multiprocessing as mp

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    mp.spawn(_worker, args=(2, port, sys.argv[1]), nprocs=2, join=True)


if __name__ == "__main__":
    main()
