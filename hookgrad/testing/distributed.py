"""Run distributed code in tests: N ranks as threads (`run_ranks`) or processes (`run_mpi`).

Example:
    >>> import hookgrad.distributed as dist
    >>> run_ranks(lambda rank, world_size: dist.get_rank() * 10, 2)
    [0, 10]
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
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
            timeout: float = 60, env: dict[str, str] | None = None,
            launcher_args: list[str] | None = None) -> subprocess.CompletedProcess[str]:
    """Run ``mpiexec -n nproc python script args`` and return the completed process.

    The result has one more attribute, ``lost_rank``: a one-line description of a rank that
    was killed by a signal (``"rank 1 (pid 123) was killed by signal 9 (SIGKILL)..."``), or
    None. On a timeout the whole launch (mpiexec and every rank) is killed, so no orphaned
    rank keeps running (and loading the machine) after the test.

    `launcher_args` go to ``mpiexec`` before ``-n`` (``["-disable-auto-cleanup"]`` keeps the
    other ranks running when one dies, as a launcher without MPICH's cleanup would).

    Without ``mpiexec``, a pytest test calling this is skipped (failed when ``CI`` or
    ``HOOKGRAD_REQUIRE_ORACLE=1`` is set, where the MPI tests must run for real).

    Raises:
        FileNotFoundError: When no ``mpiexec`` is available outside pytest.
        subprocess.TimeoutExpired: When the run exceeds ``timeout`` seconds (a hang).
    """
    launcher = mpiexec()
    if launcher is None:
        _missing_mpiexec()
    with tempfile.TemporaryDirectory(prefix="hookgrad-ranks-") as rank_dir:
        full_env = {**os.environ, **(env or {}), RANK_DIR_ENV: rank_dir}
        full_env.setdefault("OMP_NUM_THREADS", "1")
        full_env.setdefault("OPENBLAS_NUM_THREADS", "1")
        cmd = [launcher, *(launcher_args or []), "-n", str(nproc), sys.executable, script,
               *(args or [])]
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True, env=full_env, start_new_session=True)
        try:
            out, err = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            kill_launch(proc)
            out, err = proc.communicate()
            raise subprocess.TimeoutExpired(cmd, timeout, out, err) from None
        done = subprocess.CompletedProcess(cmd, proc.returncode, out, err)
        done.lost_rank = lost_rank_message(out + err, rank_dir)  # type: ignore[attr-defined]
    return done


def kill_launch(proc: subprocess.Popen) -> None:
    """Kill a launch started with ``start_new_session=True``: mpiexec and all its ranks."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


RANK_DIR_ENV = "HOOKGRAD_RANK_DIR"  # ranks record "<pid> -> rank" there (launcher messages)
_BANNER_PID = re.compile(r"^=\s+PID (\d+) RUNNING AT", re.M)
_BANNER_CODE = re.compile(r"^=\s+EXIT CODE: (\d+)", re.M)


def lost_rank_message(output: str, rank_dir: str | None) -> str | None:
    """One line naming the rank that MPICH's launcher reported as killed, from its "BAD
    TERMINATION" banner and the pid files the ranks wrote under ``rank_dir``; None when the
    output has no such banner."""
    pid, code = _BANNER_PID.search(output), _BANNER_CODE.search(output)
    if pid is None:
        return None
    rank = "a rank"
    if rank_dir is not None:
        try:
            with open(os.path.join(rank_dir, pid.group(1))) as f:
                rank = f"rank {int(f.read())}"
        except (OSError, ValueError):
            pass
    number = int(code.group(1)) if code else 0
    how = f"was killed by signal {number} ({signal.Signals(number).name})" \
        if number in {s.value for s in signal.Signals} else f"exited with code {number}"
    return (f"{rank} (pid {pid.group(1)}) {how}; mpiexec stopped the other ranks before "
            "they could report")


class BannerFilter:
    """Passes a launch's stdout through, holding back MPICH's multi-line termination banner
    (kept in ``banner`` for `lost_rank_message`)."""

    _TAIL = ("YOUR APPLICATION TERMINATED", "This typically refers to a problem",
             "Please see the FAQ page")

    def __init__(self, write: Callable[[str], Any]) -> None:
        self.write, self.banner, self._held = write, "", ""

    def feed(self, line: str) -> None:
        """Handle one line (with its newline)."""
        bare = line.strip()
        if bare.startswith("=" * 20) or (self.banner and bare.startswith("=")) or \
                bare.startswith(self._TAIL):
            self.banner += line
            self._held = ""
            return
        if bare == "" and not self._held:
            self._held = line  # a blank line right before the banner belongs to it
            return
        if self._held:
            self.write(self._held)
            self._held = ""
        self.write(line)

    def close(self) -> None:
        if self._held:
            self.write(self._held)
            self._held = ""
