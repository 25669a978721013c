"""DDP benchmark: ``python -m bench.ddp [--steps N] [--json PATH]`` (needs hookgrad[mpi]).

Runs the ``mlp1024`` workload under DDP with ``mpiexec -n 1`` and ``-n 2`` (batch 1024 per
rank) and prints: samples/s and scaling efficiency, the share of all-reduce time hidden behind
backward, and bytes sent / step time for ``allreduce_hook`` vs ``fp16_compress_hook`` vs
PowerSGD (rank 1). Each configuration runs in fresh processes; see `bench._ddp_worker`.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

from hookgrad.testing.distributed import mpiexec

CONFIGS = [  # (ranks, hook, bucket_cap_mb)
    (1, "noddp", None), (1, "none", None), (2, "none", None), (2, "none", 0.25),
    (2, "allreduce", 0.25), (2, "fp16", 0.25), (2, "powersgd", 0.25),
]


def run_config(n: int, hook: str, cap: float | None, steps: int) -> dict:
    cmd = [mpiexec() or "mpiexec", "-n", str(n), sys.executable, "-m", "bench._ddp_worker",
           "--hook", hook, "--steps", str(steps)]
    if cap is not None:
        cmd += ["--bucket-cap-mb", str(cap)]
    env = {**os.environ, "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"}
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600, env=env, check=True)
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.ddp")
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--repeats", type=int, default=2,
                   help="runs per configuration, interleaved; the fastest is reported")
    p.add_argument("--json", default=None)
    args = p.parse_args(argv)
    runs: dict[int, list[dict]] = {i: [] for i in range(len(CONFIGS))}
    for _ in range(args.repeats):  # interleaved, so a busy moment does not hit one config
        for i, (n, hook, cap) in enumerate(CONFIGS):
            runs[i].append(run_config(n, hook, cap, args.steps))
    rows = [min(runs[i], key=lambda r: r["step_ms"]) for i in range(len(CONFIGS))]
    one = next(r for r in rows if r["world"] == 1 and r["hook"] == "none")
    print("| ranks | hook | bucket cap MB | buckets | step ms (wall) | CPU ms | samples/s | "
          "scaling eff. | "
          "bytes/step/rank | exposed wait ms (min over ranks) | blocking all-reduce ms | "
          "hidden share |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        eff = r["samples_per_s"] / (r["world"] * one["samples_per_s"])
        hidden = "-" if r["hidden_share"] is None else f"{100 * r['hidden_share']:.0f}%"
        print(f"| {r['world']} | {r['hook']} | {r['bucket_cap_mb'] or 'default'} | "
              f"{r['buckets']} | {r['step_ms']:.1f} | {r['cpu_ms']:.1f} | {r['samples_per_s']:.0f} | "
              f"{eff:.2f} | "
              f"{r['bytes_per_step'] / 1e6:.3f} MB | {r['finalize_ms']:.2f} | "
              f"{r['blocking_allreduce_ms']:.2f} | {hidden} |")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=2)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
