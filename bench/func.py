"""``python -m bench.func``: the torch.func workloads through the bench harness, with loop/vmap.

Runs `bench.func_workloads` (per-sample gradients of the bench MLP and CNN, batch 64, by
``vmap(grad)`` and by a Python loop of ``grad``; a jacrev of a 64-output function) exactly as
``python -m bench --only psg_mlp ...`` does (one worker process per library, one thread,
alternating samples, CPU clock), prints the harness's table and then the issue's two targets:
hookgrad/torch of the vmap workloads (<= 1.5) and hookgrad's loop/vmap (>= 10).
"""

from __future__ import annotations

import argparse

from bench import func_workloads as F
from bench import run as R


def speedups(results: dict) -> list[tuple[str, float | None, float | None]]:
    """(vmap workload, hookgrad/torch, hookgrad loop/vmap) per vmap workload run."""
    rows = results["workloads"]
    out = []
    for name in rows:
        if name.startswith("psg_loop_"):
            continue
        loop = rows.get(name.replace("psg_", "psg_loop_"), {}).get("hookgrad")
        vmap = rows[name].get("hookgrad")
        out.append((name, rows[name].get("ratio"),
                    loop / vmap if loop and vmap and name.startswith("psg_") else None))
    return out


def main(argv: list | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.func", description=__doc__)
    ap.add_argument("--quick", action="store_true", help="fewer samples")
    ap.add_argument("--clock", choices=("cpu", "wall"), default="cpu")
    ap.add_argument("names", nargs="*", help=f"subset of {sorted(F.TABLE)}")
    args = ap.parse_args(argv)
    results = R.run(args.names or list(F.TABLE), args.quick, args.clock)
    print(R.format_table(results))
    print("\n| workload | hookgrad/torch (<= 1.5) | hookgrad loop/vmap (>= 10) |")
    print("|---|---|---|")
    for name, ratio, sp in speedups(results):
        print(f"| {name} | {R._fmt(ratio)} | {'-' if sp is None else f'{sp:.1f}x'} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
