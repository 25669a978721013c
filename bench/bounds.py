"""Where a hookgrad step's time goes: the profile that bounds a workload's ratio to PyTorch.

Usage: ``python -m bench.bounds [NAME ...]`` (default: every eager workload). For each workload,
hookgrad only, one thread: the step time (CPU clock, best of 5 loops), the share of it spent in
the cyclic garbage collector (``gc.callbacks``), the Python-level and C-level function calls per
step (``sys.setprofile``: deterministic, so a change can be judged on a busy machine), and the
functions with the most own time under ``cProfile``. Never used by unit tests for timing.
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import io
import pstats
import sys
import time

from bench import _threads  # noqa: F401  (one BLAS/OpenMP thread, before NumPy loads)
from bench import workloads as W

EAGER = ["chain", "chain_hooks", "mlp64", "mlp1_mse", "mlp1024", "cnn", "hvp", "lstm",
         "hooked_mlp", "gpt", "gpt_sdpa", "lstm_lm", "mnist_cnn",
         "psg_mlp", "psg_loop_mlp", "psg_cnn", "psg_loop_cnn", "jacrev64"]


def _best_step_seconds(step, loops: int = 5) -> tuple[float, int]:
    n, t = 1, 0.0
    while t < 0.2:  # calibrate: loops of at least 0.2 s
        n *= 2
        t0 = time.process_time()
        for _ in range(n):
            step()
        t = time.process_time() - t0
    best = t / n
    for _ in range(loops - 1):
        t0 = time.process_time()
        for _ in range(n):
            step()
        best = min(best, (time.process_time() - t0) / n)
    return best, n


def _gc_share(step, n: int) -> float:
    spent, started = [0.0], [0.0]

    def watch(phase: str, info: dict) -> None:
        if phase == "start":
            started[0] = time.perf_counter()
        else:
            spent[0] += time.perf_counter() - started[0]

    gc.callbacks.append(watch)
    try:
        t0 = time.perf_counter()
        for _ in range(n):
            step()
        total = time.perf_counter() - t0
    finally:
        gc.callbacks.remove(watch)
    return spent[0] / total


def _calls(step) -> tuple[int, int]:
    counts = [0, 0]

    def profile(frame, event: str, arg) -> None:
        if event == "call":
            counts[0] += 1
        elif event == "c_call":
            counts[1] += 1

    sys.setprofile(profile)
    try:
        step()
    finally:
        sys.setprofile(None)
    return counts[0], counts[1] - 1  # not the closing ``sys.setprofile(None)``


def _top(step, n: int, k: int = 6) -> list[str]:
    prof = cProfile.Profile()
    prof.enable()
    for _ in range(n):
        step()
    prof.disable()
    stats = pstats.Stats(prof, stream=io.StringIO())
    total = stats.total_tt or 1.0
    rows = sorted(stats.stats.items(), key=lambda kv: -kv[1][2])[:k]  # by own time
    out = []
    for (path, line, name), (_, calls, own, _cum, _) in rows:
        where = path.rsplit("hookgrad/", 1)[-1] if "hookgrad/" in path else path
        out.append(f"{name} ({where}:{line}) {100 * own / total:.0f}% own, {calls // n}/step")
    return out


def bound(name: str) -> dict:
    """Measure one workload (see the module docstring)."""
    import hookgrad

    make, divisor, unit, _ = W.TABLE[name]
    step, *_ = make(hookgrad)  # a compiled workload also gives its first-call time
    for _ in range(10):
        step()
    seconds, n = _best_step_seconds(step)
    scale = {"us/op": 1e6, "us/hook": 1e6, "ms/step": 1e3}[unit] / divisor
    py, c = _calls(step)
    return {"workload": name, "time": f"{seconds * scale:.3g} {unit}",
            "gc": f"{100 * _gc_share(step, n):.1f}%",
            "python calls/step": py, "C calls/step": c, "top": _top(step, max(1, n // 4))}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.bounds", description=__doc__)
    # (no ``choices=``: with ``nargs="*"`` argparse checks an empty list against them)
    parser.add_argument("names", nargs="*", help="workloads (default: every eager one)")
    args = parser.parse_args(argv)
    unknown = [n for n in args.names if n not in W.TABLE]
    if unknown:
        parser.error(f"unknown workloads {unknown}; choose from {sorted(W.TABLE)}")
    args.names = args.names or EAGER
    print("| workload | time | GC share | Python calls/step | C calls/step |")
    print("|---|---|---|---|---|")
    tops = []
    for name in args.names:
        row = bound(name)
        print(f"| {name} | {row['time']} | {row['gc']} | {row['python calls/step']} | "
              f"{row['C calls/step']} |", flush=True)
        tops.append((name, row["top"]))
    for name, top in tops:
        print(f"\n{name}, most own time under cProfile:")
        for line in top:
            print(f"  - {line}")


if __name__ == "__main__":
    main()
