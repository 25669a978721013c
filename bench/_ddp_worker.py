"""One rank of the DDP benchmark (run by `bench.ddp` under ``mpiexec -n N``).

Trains the ``mlp1024`` workload (MLP 784-256-256-10, batch 1024 per rank, SGD) wrapped in
`DistributedDataParallel` and prints one JSON line from rank 0: median step time, samples/s,
bytes all-reduced per step per rank, time spent waiting in the reducer's finalize (exposed
communication) and the time of one blocking all-reduce of all gradients (the cost if nothing
overlapped). Instrumentation wraps ``hookgrad.distributed.all_reduce`` and ``Reducer.finalize``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

import numpy as np

import hookgrad
import hookgrad.distributed as dist
from hookgrad.distributed import collectives
from bench.workloads import _mlp_setup
from hookgrad.distributed.algorithms.ddp_comm_hooks import default_hooks, powerSGD_hook
from hookgrad.nn.parallel import DistributedDataParallel
from hookgrad.nn.parallel._reducer import Reducer

COUNT = {"bytes": 0, "finalize": 0.0}


def _instrument() -> None:
    plain_all_reduce, plain_finalize = dist.all_reduce, Reducer.finalize

    def all_reduce(tensor, *args, **kwargs):
        COUNT["bytes"] += tensor._data.nbytes
        return plain_all_reduce(tensor, *args, **kwargs)

    def finalize(self):
        t0 = time.perf_counter()
        plain_finalize(self)
        COUNT["finalize"] += time.perf_counter() - t0

    dist.all_reduce = all_reduce
    collectives.all_reduce = all_reduce  # what the comm hooks call
    Reducer.finalize = finalize


def _register(ddp, hook: str) -> None:
    if hook == "fp16":
        ddp.register_comm_hook(None, default_hooks.fp16_compress_hook)
    elif hook == "powersgd":
        state = powerSGD_hook.PowerSGDState(None, matrix_approximation_rank=1,
                                            start_powerSGD_iter=2)
        ddp.register_comm_hook(state, powerSGD_hook.powerSGD_hook)
    elif hook == "allreduce":
        ddp.register_comm_hook(None, default_hooks.allreduce_hook)


def _blocking_allreduce_ms(numel: int, repeats: int = 10) -> float:
    buf = hookgrad.zeros(numel)
    times = []
    for _ in range(repeats):
        dist.barrier()
        t0 = time.perf_counter()
        dist.all_reduce(buf)
        times.append(time.perf_counter() - t0)
    return 1e3 * statistics.median(times)


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--hook", default="none", choices=["none", "allreduce", "fp16", "powersgd",
                                                      "noddp"])
    p.add_argument("--bucket-cap-mb", type=float, default=None)
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--warmup", type=int, default=4)
    args = p.parse_args()
    dist.init_process_group("mpi")
    world = dist.get_world_size()
    model, x, y = _mlp_setup(hookgrad, 1024)
    net = model
    if args.hook != "noddp":
        net = DistributedDataParallel(model, bucket_cap_mb=args.bucket_cap_mb)
        _register(net, args.hook)
    _instrument()
    opt = hookgrad.optim.SGD(model.parameters(), lr=0.01)
    loss_fn = hookgrad.nn.CrossEntropyLoss()
    times, cpu = [], []
    for i in range(args.warmup + args.steps):
        if i == args.warmup:
            COUNT.update(bytes=0, finalize=0.0)
        dist.barrier()
        t0, c0 = time.perf_counter(), time.process_time()
        opt.zero_grad()
        loss_fn(net(x), y).backward()
        opt.step()
        times.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
    sent = COUNT["bytes"] / args.steps
    numel = sum(p.numel() for p in model.parameters())
    ar_ms = _blocking_allreduce_ms(numel) if world > 1 else 0.0
    step = statistics.median(times[args.warmup:])
    # The rank that reaches finalize last barely waits for its peer: its wait is the exposed
    # communication; the other rank's wait also holds the peer's lateness (load imbalance).
    waits: list = [None] * world
    dist.all_gather_object(waits, 1e3 * COUNT["finalize"] / args.steps)
    fin_ms = min(waits)
    row = {"world": world, "hook": args.hook, "bucket_cap_mb": args.bucket_cap_mb,
           "step_ms": 1e3 * step, "cpu_ms": 1e3 * statistics.median(cpu[args.warmup:]), "samples_per_s": world * 1024 / step,
           "bytes_per_step": sent, "finalize_ms": fin_ms, "finalize_ms_per_rank": waits,
           "blocking_allreduce_ms": ar_ms,
           "hidden_share": float(np.clip(1 - fin_ms / ar_ms, 0, 1)) if ar_ms else None,
           "buckets": len(net._get_bucket_indices()) if args.hook != "noddp" else 0}
    if dist.get_rank() == 0:
        print(json.dumps(row))


if __name__ == "__main__":
    main()
