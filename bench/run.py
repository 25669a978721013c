"""Run every workload for hookgrad and (when installed) PyTorch; print a ratio table, write JSON.

Usage: ``python -m bench [--quick] [--clock {cpu,wall}] [--json PATH] [--only NAME ...]``.
Both libraries run in this process, one thread each, after a warm-up; each sample times a loop
of steps, samples of the two libraries alternate, and the reported time is the median over
samples. The default clock is the process's CPU time, which a machine shared with other work
disturbs far less than elapsed time (``--clock wall`` for elapsed time). Never used by unit
tests for timing.
"""

from __future__ import annotations

import bench._threads  # noqa: F401  (must precede NumPy/torch imports)

import argparse
import json
import platform
import statistics
import sys
import time
import tracemalloc
from collections.abc import Callable

from bench import workloads as W

# name -> (factory(lib), unit divisor, unit label, description)
WORKLOADS: dict[str, tuple[Callable, float, str, str]] = {
    "chain": (lambda lib: W.chain(lib), W.CHAIN_OPS, "us/op",
              "200 elementwise ops (mul, tanh) on 16x16, forward+backward"),
    "chain_hooks": (lambda lib: W.chain(lib, hooks=True), W.CHAIN_OPS // 2, "us/hook",
                    "same chain + no-op register_hook per intermediate (extra cost per hook)"),
    "mlp64": (lambda lib: W.mlp(lib, 64), 1, "ms/step", "MLP 784-256-256-10, CE, SGD, batch 64"),
    "mlp1024": (lambda lib: W.mlp(lib, 1024), 1, "ms/step", "same MLP, batch 1024"),
    "cnn": (lambda lib: W.cnn(lib), 1, "ms/step",
            "conv3x3(1->8)+ReLU+maxpool2+Linear, 1x28x28, batch 64"),
    "hvp": (lambda lib: W.hvp(lib), 1, "ms/step", "Hessian-vector product, small MLP loss"),
    "lstm": (lambda lib: W.lstm(lib), 1, "ms/step", "LSTM(32->64), seq 20, batch 32, SGD step"),
    "hooked_mlp": (lambda lib: W.hooked_mlp(lib), 1, "ms/step",
                   "MLP batch 64 with fwd pre/post + full backward hooks on every layer"),
}


CLOCKS: dict[str, Callable[[], float]] = {"cpu": time.process_time, "wall": time.perf_counter}


def _calibrate(step: Callable[[], None], min_time: float, clock: Callable[[], float]) -> int:
    """Warm up, then find a loop count whose run lasts at least `min_time`."""
    for _ in range(3):
        step()
    n = 1
    while n < 1 << 14:
        t0 = clock()
        for _ in range(n):
            step()
        if clock() - t0 >= min_time:
            break
        n *= 2
    return n


def _time_interleaved(steps: dict[str, Callable[[], None]], samples: int, min_time: float,
                      clock: Callable[[], float]) -> dict[str, float]:
    """Median seconds per step for each library, sampling the libraries alternately.

    Alternating samples (hookgrad, torch, hookgrad, torch...) means that a slow phase of a
    shared machine hits both libraries alike, so the ratio stays meaningful when the absolute
    times drift.
    """
    loops = {name: _calibrate(step, min_time, clock) for name, step in steps.items()}
    times: dict[str, list[float]] = {name: [] for name in steps}
    for _ in range(samples):
        for name, step in steps.items():
            n = loops[name]
            t0 = clock()
            for _ in range(n):
                step()
            times[name].append((clock() - t0) / n)
    return {name: statistics.median(ts) for name, ts in times.items()}


def _libs() -> dict:
    import hookgrad

    libs = {"hookgrad": hookgrad}
    try:
        import torch

        torch.set_num_threads(1)
        libs["torch"] = torch
    except ImportError:
        pass
    return libs


def _peak_memory_mb(lib) -> float:
    step, _ = W.mlp(lib, 64)
    step()
    tracemalloc.start()
    step()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak / 2**20


def _row(name: str, libs: dict, samples: int, min_time: float,
         clock: Callable[[], float]) -> dict:
    factory, divisor, unit, desc = WORKLOADS[name]
    row: dict = {"unit": unit, "description": desc}
    steps, firsts = {}, {}
    for lib_name, lib in libs.items():
        try:
            steps[lib_name], firsts[lib_name] = factory(lib)
        except Exception as e:  # noqa: BLE001 - report what is missing, keep going
            row[lib_name] = None
            row[lib_name + "_error"] = f"{type(e).__name__}: {e}"
    scale = 1e6 if unit.startswith("us") else 1e3
    for lib_name, t in _time_interleaved(steps, samples, min_time, clock).items():
        row[lib_name] = t * scale / divisor
    if len(firsts) == 2:
        a, b = firsts["hookgrad"], firsts["torch"]
        row["first_value_agrees"] = abs(a - b) <= 1e-3 * max(1.0, abs(b))
    return row


def run(names: list[str], quick: bool, clock: str = "cpu") -> dict:
    libs = _libs()
    samples, min_time = (3, 0.05) if quick else (7, 0.2)
    results: dict = {"machine": platform.platform(), "python": sys.version.split()[0],
                     "numpy": _version("numpy"), "torch": _version("torch"),
                     "quick": quick, "clock": clock, "workloads": {}}
    if "chain_hooks" in names and "chain" not in names:
        names = ["chain", *names]  # chain_hooks is reported relative to chain
    for name in names:
        results["workloads"][name] = _row(name, libs, samples, min_time, CLOCKS[clock])
    if "chain_hooks" in results["workloads"]:
        # chain_hooks reports the *extra* cost per hook: subtract the plain chain per hook
        base, hooked = results["workloads"]["chain"], results["workloads"]["chain_hooks"]
        for lib_name in libs:
            if base.get(lib_name) is not None and hooked.get(lib_name) is not None:
                per_chain = base[lib_name] * W.CHAIN_OPS
                hooked[lib_name] = (hooked[lib_name] * (W.CHAIN_OPS // 2) - per_chain) / (
                    W.CHAIN_OPS // 2)
    for row in results["workloads"].values():
        if row.get("hookgrad") and row.get("torch"):
            row["ratio"] = row["hookgrad"] / row["torch"]
    results["peak_memory_mb_mlp64_step"] = {"hookgrad (tracemalloc)": _peak_memory_mb(
        libs["hookgrad"])}
    return results


def _version(module: str) -> str | None:
    try:
        return __import__(module).__version__
    except ImportError:
        return None


def format_table(results: dict) -> str:
    lines = ["| workload | unit | hookgrad | PyTorch | ratio | same first loss |",
             "|---|---|---|---|---|---|"]
    for name, row in results["workloads"].items():
        def fmt(v):
            return "n/a" if v is None else f"{v:.3g}"
        lines.append(
            f"| {name} | {row['unit']} | {fmt(row.get('hookgrad'))} | {fmt(row.get('torch'))} | "
            f"{fmt(row.get('ratio'))} | {row.get('first_value_agrees', 'n/a')} |"
        )
        for lib in ("hookgrad", "torch"):
            if row.get(lib + "_error"):
                lines.append(f"|  ({lib} failed: {row[lib + '_error'][:80]}) | | | | | |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="fewer samples (< 2 minutes)")
    parser.add_argument("--json", default="bench_results.json", help="where to write results")
    parser.add_argument("--only", nargs="*", choices=sorted(WORKLOADS), help="subset")
    parser.add_argument("--clock", choices=sorted(CLOCKS), default="cpu",
                        help="cpu: process CPU time (robust on a shared machine; default); "
                             "wall: elapsed time")
    args = parser.parse_args(argv)
    results = run(args.only or list(WORKLOADS), args.quick, args.clock)
    print(format_table(results))
    print("peak memory of one MLP step:", results["peak_memory_mb_mlp64_step"])
    with open(args.json, "w") as f:
        json.dump(results, f, indent=2)
    return 0
