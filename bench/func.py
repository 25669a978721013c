"""``python -m bench.func``: torch.func workloads, hookgrad against PyTorch (one run, ratios).

Prints, per workload, the best-of-N time of hookgrad's ``vmap``-based transform, PyTorch's
``torch.func`` and (for per-sample gradients) hookgrad's Python loop over samples, with the
ratios the issue sets targets for: hookgrad/torch <= 1.5 and loop/vmap >= 10.
"""

from __future__ import annotations  # noqa: I001 (bench._threads must come first)

import bench._threads  # noqa: F401  (one thread per library, before NumPy/torch load)

import argparse
import time
import warnings

from bench.func_workloads import WORKLOADS


def _best(step, repeat: int) -> float:
    step()  # warm-up (and first-call caches)
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        step()
        best = min(best, time.perf_counter() - t0)
    return best


def run(repeat: int = 5, names: list | None = None) -> list[dict]:
    import torch

    import hookgrad

    torch.set_num_threads(1)
    rows = []
    for name in names or list(WORKLOADS):
        make = WORKLOADS[name]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            hg = _best(make(hookgrad, "vmap"), repeat)
            th = _best(make(torch, "vmap"), repeat)
            loop = (_best(make(hookgrad, "loop"), max(1, repeat // 3))
                    if name != "jacrev64" else None)
        rows.append({"workload": name, "hookgrad_ms": hg * 1e3, "torch_ms": th * 1e3,
                     "ratio": hg / th, "loop_ms": None if loop is None else loop * 1e3,
                     "loop_speedup": None if loop is None else loop / hg})
    return rows


def main(argv: list | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.func")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("names", nargs="*")
    args = ap.parse_args(argv)
    print(f"{'workload':16} {'hookgrad ms':>12} {'torch ms':>10} {'ratio':>7} "
          f"{'loop ms':>10} {'loop/vmap':>10}")
    for r in run(args.repeat, args.names or None):
        loop = "-" if r["loop_ms"] is None else f"{r['loop_ms']:.1f}"
        sp = "-" if r["loop_speedup"] is None else f"{r['loop_speedup']:.1f}x"
        print(f"{r['workload']:16} {r['hookgrad_ms']:12.2f} {r['torch_ms']:10.2f} "
              f"{r['ratio']:7.2f} {loop:>10} {sp:>10}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
