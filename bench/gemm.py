"""How much of a hookgrad step is matrix products, and whether those products are slower than
PyTorch's: the GEMM floor that bounds a workload's ratio.

Usage: ``python -m bench.gemm [NAME ...]`` (default: gpt gpt_sdpa lstm_lm mnist_cnn). One
thread. For each workload: one hookgrad step is run with ``mm_arrays`` (every 2-D ``mm``/``mv``
of the NumPy backend) recorded; each recorded (shape, layout) is then timed under ``np.dot`` and
``torch.mm`` (same operands, CPU clock, best of 5), and the table gives the step's summed GEMM
time for both libraries next to the step time. ``step - gemm`` is the rest (dispatch, autograd,
pointwise, reductions, optimizer): the part hookgrad's own code can still win back. Batched
products (``bmm``) are not recorded. Never used by unit tests for timing.
"""

from __future__ import annotations

import argparse
import collections
import sys
import time

from bench import _threads  # noqa: F401  (one BLAS/OpenMP thread, before NumPy loads)
from bench import workloads as W
from bench.bounds import _best_step_seconds

DEFAULT = ["gpt", "gpt_sdpa", "lstm_lm", "mnist_cnn"]


def _record(step) -> collections.Counter:
    """Run `step` once with every module-level ``mm_arrays`` replaced by a recorder."""
    import numpy as np

    from hookgrad._ops import _matmul

    orig = _matmul.mm_arrays
    seen: collections.Counter = collections.Counter()

    def recording(a, b):
        if type(a) is np.ndarray and type(b) is np.ndarray:
            seen[(a.shape, a.strides, b.shape, b.strides, a.dtype.str)] += 1
        return orig(a, b)

    holders = [m for m in list(sys.modules.values())
               if getattr(m, "__name__", "").startswith("hookgrad")
               and getattr(m, "mm_arrays", None) is orig]
    for m in holders:
        m.mm_arrays = recording
    try:
        step()
    finally:
        for m in holders:
            m.mm_arrays = orig
    return seen


def _operand(np, shape, strides, dtype):
    """A random array of `shape` with the recorded layout (C order or a transposed view)."""
    arr = np.random.default_rng(0).random(shape).astype(dtype)
    if len(shape) == 2 and strides[0] < strides[1]:  # Fortran order: a transposed view
        arr = np.ascontiguousarray(arr.T).T
    return arr


def _best(fn, a, b, reps: int = 10) -> float:
    best = float("inf")
    for _ in range(5):
        t0 = time.process_time()
        for _ in range(reps):
            fn(a, b)
        best = min(best, (time.process_time() - t0) / reps)
    return best


def gemm_seconds(seen: collections.Counter) -> tuple[float, float]:
    """Summed per-step GEMM time of the recorded products under NumPy and under PyTorch."""
    import numpy as np
    import torch

    torch.set_num_threads(1)
    total_np = total_torch = 0.0
    for (sa, st_a, sb, st_b, dt), count in seen.items():
        a, b = _operand(np, sa, st_a, dt), _operand(np, sb, st_b, dt)
        ta, tb = torch.from_numpy(a), torch.from_numpy(b)
        mm = torch.mm if tb.dim() == 2 else torch.mv
        total_np += count * _best(np.dot, a, b)
        total_torch += count * _best(mm, ta, tb)
    return total_np, total_torch


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.gemm", description=__doc__)
    parser.add_argument("names", nargs="*", help=f"workloads (default: {' '.join(DEFAULT)})")
    args = parser.parse_args(argv)
    unknown = [n for n in args.names if n not in W.TABLE]
    if unknown:
        parser.error(f"unknown workloads {unknown}; choose from {sorted(W.TABLE)}")
    import hookgrad

    print("| workload | hookgrad step ms | mm calls/step | GEMM ms (NumPy) | GEMM ms (torch) "
          "| step - GEMM ms |")
    print("|---|---|---|---|---|---|")
    for name in args.names or DEFAULT:
        step, _ = W.TABLE[name][0](hookgrad)
        for _ in range(3):
            step()
        seconds, _n = _best_step_seconds(step)
        seen = _record(step)
        g_np, g_torch = gemm_seconds(seen)
        print(f"| {name} | {seconds * 1e3:.1f} | {sum(seen.values())} | {g_np * 1e3:.1f} | "
              f"{g_torch * 1e3:.1f} | {(seconds - g_np) * 1e3:.1f} |", flush=True)


if __name__ == "__main__":
    main()
