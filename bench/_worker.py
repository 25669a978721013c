"""One library's side of the benchmark: a process that imports only that library.

Each library runs in its own process so that neither pays for the other's objects: a full
garbage collection in CPython walks every tracked object of the process, and PyTorch's
import alone adds about 140,000 of them, which hookgrad's collections would otherwise walk.
The parent (`bench.run`) sends one request at a time and alternates the libraries' samples.
"""

from __future__ import annotations  # noqa: I001 (bench._threads must come first)

import bench._threads  # noqa: F401  (must precede NumPy/torch imports)

import contextlib
import importlib
import os
import platform
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from typing import Any

from bench import peers
from bench import workloads as W

CLOCKS: dict[str, Callable[[], float]] = {"cpu": time.process_time, "wall": time.perf_counter}


def _cold_caches() -> str:
    """Point both libraries' on-disk compile caches at a fresh folder (before the import):
    first-call compile times are measured cold. Returns the folder (removed on stop)."""
    folder = tempfile.mkdtemp(prefix="bench-compile-cache-")
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = os.path.join(folder, "inductor")
    os.environ["HOOKGRAD_CACHE_DIR"] = os.path.join(folder, "hookgrad")
    return folder


def _import(lib_name: str) -> Any:
    if lib_name in peers.PEERS:  # a peer's workloads module (it imports the peer library)
        return importlib.import_module(peers.PEERS[lib_name].module)
    lib = importlib.import_module(lib_name)
    if lib_name == "torch":
        lib.set_num_threads(1)
    return lib


def calibrate(step: Callable[[], None], min_time: float, clock: Callable[[], float]) -> int:
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


def sample(step: Callable[[], None], n: int, clock: Callable[[], float]) -> float:
    """Seconds per step over a loop of `n` steps."""
    t0 = clock()
    for _ in range(n):
        step()
    return (clock() - t0) / n


def _build(lib_name: str, lib: Any, name: str,
           compiled: bool) -> tuple[Callable[[], None], float, float | None]:
    """(step, first value, first-call seconds of a compiled workload or None); with
    ``compiled`` False a compiled workload is built without ``lib.compile`` (`W.uncompiled`)."""
    if lib_name in peers.PEERS:
        step, first, *rest = lib.build(name)
    else:
        with contextlib.nullcontext() if compiled else W.uncompiled():
            step, first, *rest = W.TABLE[name][0](lib)
    return step, first, (rest[0] if rest and compiled else None)


def _versions(lib_name: str, lib: Any) -> dict:
    import importlib.metadata

    import numpy

    version = (importlib.metadata.version(peers.PEERS[lib_name].distribution)
               if lib_name in peers.PEERS else getattr(lib, "__version__", "?"))
    return {"library": version, "numpy": numpy.__version__,
            "python": sys.version.split()[0], "machine": platform.platform()}


def serve(lib_name: str, conn: Any) -> None:
    """Answer ``(op, *args)`` requests on `conn` until ``("stop",)``; replies ``(ok, value)``."""
    cache = _cold_caches()
    lib = _import(lib_name)
    steps: dict[str, Callable[[], None]] = {}
    while True:
        op, *args = conn.recv()
        if op == "stop":
            shutil.rmtree(cache, ignore_errors=True)
            return
        try:
            if op == "versions":
                value: Any = _versions(lib_name, lib)
            elif op == "build":  # (name, key, compiled): the step is stored under key
                steps[args[1]], *value = _build(lib_name, lib, args[0], args[2])
            elif op == "calibrate":
                value = calibrate(steps[args[0]], args[1], CLOCKS[args[2]])
            elif op == "sample":
                value = sample(steps[args[0]], args[1], CLOCKS[args[2]])
            elif op == "notes":  # a peer's labels per workload, e.g. "workaround"
                value = getattr(lib, "NOTES", {})
            elif op == "peak_memory":
                value = W.peak_memory_mb(lib)
            else:
                raise ValueError(f"unknown request {op!r}")
        except Exception as e:  # noqa: BLE001 - reported in the table, the run goes on
            conn.send((False, f"{type(e).__name__}: {e}"))
        else:
            conn.send((True, value))
