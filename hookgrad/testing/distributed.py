"""Run distributed code in tests: N ranks as threads (`run_ranks`) or processes (`run_mpi`).

Example:
    >>> import hookgrad.distributed as dist
    >>> run_ranks(lambda rank, world_size: dist.get_rank() * 10, 2)
    [0, 10]
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import threading
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import hookgrad.distributed as dist


def run_ranks(fn: Callable[[int, int], Any], world_size: int, *,
              timeout: timedelta = timedelta(seconds=30)) -> list[Any]:
    """Run ``fn(rank, world_size)`` on ``world_size`` threads, each an initialised rank of the
    in-process ``threads`` backend; return the per-rank results, or re-raise the first failure.

    A rank that raises aborts the store, so peers blocked in a collective fail at once with an
    error naming it (no hang); the re-raised exception is the first failing rank's own.
    """
    results, errors = _launch(fn, world_size, timeout)
    if errors:
        raise errors[0][1]
    return results


def run_ranks_errors(fn: Callable[[int, int], Any], world_size: int, *,
                     timeout: timedelta = timedelta(seconds=30)) -> list[BaseException | None]:
    """Like `run_ranks` but return each rank's exception (None for a rank that succeeded)."""
    out: list[BaseException | None] = [None] * world_size
    for rank, exc in _launch(fn, world_size, timeout)[1]:
        out[rank] = exc
    return out


def _launch(fn: Callable[[int, int], Any], world_size: int, timeout: timedelta
            ) -> tuple[list[Any], list[tuple[int, BaseException]]]:
    store = dist.ThreadStore(world_size)
    results: list[Any] = [None] * world_size
    errors: list[tuple[int, BaseException]] = []

    def body(rank: int) -> None:
        dist.init_process_group("threads", rank=rank, world_size=world_size, store=store,
                                timeout=timeout)
        try:
            results[rank] = fn(rank, world_size)
        except BaseException as exc:  # noqa: BLE001 - reported to the caller
            errors.append((rank, exc))
            store.abort(rank, exc)
        finally:
            dist.destroy_process_group()

    threads = [threading.Thread(target=body, args=(r,), name=f"rank{r}", daemon=True)
               for r in range(world_size)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout.total_seconds() * 4 + 10)
    if any(t.is_alive() for t in threads):
        raise TimeoutError(f"run_ranks: ranks still running after {timeout} (a hang)")
    return results, errors


def _missing_mpiexec() -> None:
    message = "mpiexec not found: pip install 'hookgrad[mpi]'"
    if "pytest" in sys.modules:
        import pytest

        if os.environ.get("CI") or os.environ.get("HOOKGRAD_REQUIRE_ORACLE") == "1":
            pytest.fail(message + " (required in CI)")
        pytest.skip(message)
    raise FileNotFoundError(message)


def mpiexec() -> str | None:
    """Path of the ``mpiexec`` launcher next to this interpreter or on PATH, else None."""
    local = os.path.join(os.path.dirname(sys.executable), "mpiexec")
    return local if os.access(local, os.X_OK) else shutil.which("mpiexec")


def run_mpi(script: str, nproc: int = 2, args: list[str] | None = None, *,
            timeout: float = 60, env: dict[str, str] | None = None
            ) -> subprocess.CompletedProcess[str]:
    """Run ``mpiexec -n nproc python script args`` and return the completed process.

    Without ``mpiexec``, a pytest test calling this is skipped (failed when ``CI`` or
    ``HOOKGRAD_REQUIRE_ORACLE=1`` is set, where the MPI tests must run for real).

    Raises:
        FileNotFoundError: When no ``mpiexec`` is available outside pytest.
        subprocess.TimeoutExpired: When the run exceeds ``timeout`` seconds (a hang).
    """
    launcher = mpiexec()
    if launcher is None:
        _missing_mpiexec()
    full_env = {**os.environ, **(env or {})}
    full_env.setdefault("OMP_NUM_THREADS", "1")
    full_env.setdefault("OPENBLAS_NUM_THREADS", "1")
    cmd = [launcher, "-n", str(nproc), sys.executable, script, *(args or [])]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=full_env,
                          check=False)
