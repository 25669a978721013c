"""``torch.multiprocessing``: the standard library's `multiprocessing`, re-exported, plus
PyTorch's `spawn`/`start_processes` (one process per rank, failures re-raised in the parent).

PyTorch wraps it to move tensors through shared memory; hookgrad tensors are NumPy arrays that
pickle by value, so the plain standard-library module is the whole story. The sharing-strategy
functions are accepted for compatibility and only record the chosen name.

Mirrors: ``torch.multiprocessing``.
"""

from __future__ import annotations

import multiprocessing as _mp
from multiprocessing import *  # noqa: F403

__all__ = list(getattr(_mp, "__all__", ())) + [
    "get_sharing_strategy", "set_sharing_strategy", "get_all_sharing_strategies",
]

_STRATEGIES = ("file_descriptor", "file_system")
_strategy = ["file_descriptor"]


def get_all_sharing_strategies() -> set[str]:
    """The strategies PyTorch offers on Linux. Mirrors: ``torch.multiprocessing.get_all_sharing_strategies``."""
    return set(_STRATEGIES)


def get_sharing_strategy() -> str:
    """The recorded strategy. Mirrors: ``torch.multiprocessing.get_sharing_strategy``."""
    return _strategy[0]


def set_sharing_strategy(new_strategy: str) -> None:
    """Record `new_strategy` (no effect: see module docstring).

    Mirrors: ``torch.multiprocessing.set_sharing_strategy``.
    """
    if new_strategy not in _STRATEGIES:
        raise AssertionError(f"invalid sharing strategy {new_strategy!r}")
    _strategy[0] = new_strategy


def __getattr__(name: str) -> object:
    # Names the standard module defines lazily (its context attributes) resolve through it.
    return getattr(_mp, name)


# --- spawn: one process per rank (torch.multiprocessing.spawn) ----------------------------------
import signal as _signal  # noqa: E402
import sys as _sys  # noqa: E402
import traceback as _traceback  # noqa: E402
import types as _types  # noqa: E402
from typing import Any as _Any  # noqa: E402

__all__ += ["spawn", "start_processes", "ProcessContext", "ProcessException", "ProcessRaisedException",
            "ProcessExitedException"]


class ProcessException(Exception):
    """Mirrors: ``torch.multiprocessing.ProcessException``."""

    def __init__(self, msg: str, error_index: int, pid: int) -> None:
        super().__init__(msg)
        self.msg, self.error_index, self.pid = msg, error_index, pid

    def __reduce__(self) -> _Any:
        return type(self), (self.msg, self.error_index, self.pid)


class ProcessRaisedException(ProcessException):
    """A spawned process raised; the message holds its traceback.

    Mirrors: ``torch.multiprocessing.ProcessRaisedException``.
    """


class ProcessExitedException(ProcessException):
    """A spawned process exited with a non-zero code or by a signal.

    Mirrors: ``torch.multiprocessing.ProcessExitedException``.
    """

    def __init__(self, msg: str, error_index: int, error_pid: int, exit_code: int,
                 signal_name: str | None = None) -> None:
        super().__init__(msg, error_index, error_pid)
        self.exit_code, self.signal_name = exit_code, signal_name

    def __reduce__(self) -> _Any:
        return type(self), (self.msg, self.error_index, self.pid, self.exit_code,
                            self.signal_name)


def _wrap(fn: _Any, i: int, args: tuple, error_queue: _Any) -> None:
    try:
        fn(i, *args)
    except KeyboardInterrupt:
        pass  # the parent is stopping everything
    except Exception:  # noqa: BLE001 - reported to the parent, which re-raises
        error_queue.put(_traceback.format_exc())
        _sys.exit(1)


class ProcessContext:
    """The processes of one `spawn`; ``join`` reports the first failure.

    Mirrors: ``torch.multiprocessing.ProcessContext``.
    """

    def __init__(self, processes: list[_Any], error_queues: list[_Any]) -> None:
        self.processes, self.error_queues = processes, error_queues

    def pids(self) -> list[int]:
        """Mirrors: ``torch.multiprocessing.ProcessContext.pids``."""
        return [int(p.pid) for p in self.processes]

    def join(self, timeout: float | None = None) -> bool:
        """Wait until every process ended (True) or ``timeout`` passed (False).

        Raises:
            ProcessRaisedException: A process raised (the others are terminated).
            ProcessExitedException: A process exited non-zero or was killed.

        Mirrors: ``torch.multiprocessing.ProcessContext.join``.
        """
        from multiprocessing.connection import wait

        alive = [p for p in self.processes if p.exitcode is None]
        if alive:
            wait([p.sentinel for p in alive], timeout=timeout)
        failed = next((i for i, p in enumerate(self.processes)
                       if p.exitcode not in (None, 0)), None)
        if failed is None:
            return all(p.exitcode == 0 for p in self.processes)
        for p in self.processes:
            if p.is_alive():
                p.terminate()
            p.join()
        proc = self.processes[failed]
        if not self.error_queues[failed].empty():
            trace = self.error_queues[failed].get()
            msg = f"\n\n-- Process {failed} terminated with the following error:\n{trace}"
            raise ProcessRaisedException(msg, failed, proc.pid)
        code = proc.exitcode
        if code < 0:
            name = _signal.Signals(-code).name
            raise ProcessExitedException(f"process {failed} terminated with signal {name}",
                                         failed, proc.pid, code, name)
        raise ProcessExitedException(f"process {failed} terminated with exit code {code}",
                                     failed, proc.pid, code)


def start_processes(fn: _Any, args: tuple = (), nprocs: int = 1, join: bool = True,
                    daemon: bool = False, start_method: str = "spawn") -> ProcessContext | None:
    """Run ``fn(i, *args)`` in ``nprocs`` new processes, ``i`` = 0..nprocs-1.

    Under the ``torch`` alias (``python -m hookgrad.run``) ``"spawn"`` and ``"forkserver"`` start
    the processes by ``fork`` instead: a fresh interpreter would re-import the script with the
    real ``torch``; forked ones keep the alias.

    Mirrors: ``torch.multiprocessing.start_processes``.
    """
    # The alias renames the package to ``torch`` (`hookgrad.testing._as_torch`), so it is
    # recognised by identity: a fresh interpreter (spawn, or forkserver's server) would import
    # the real ``torch`` in every rank.
    if start_method in ("spawn", "forkserver") and \
            _sys.modules.get("torch") is _sys.modules.get("hookgrad"):
        start_method = "fork"
    ctx = _mp.get_context(start_method)
    processes, queues = [], []
    for i in range(nprocs):
        queue = ctx.SimpleQueue()
        proc = ctx.Process(target=_wrap, args=(fn, i, args, queue), daemon=daemon)
        proc.start()
        processes.append(proc)
        queues.append(queue)
    context = ProcessContext(processes, queues)
    if not join:
        return context
    while not context.join():
        pass
    return None


def spawn(fn: _Any, args: tuple = (), nprocs: int = 1, join: bool = True, daemon: bool = False,
          start_method: str = "spawn") -> ProcessContext | None:
    """Mirrors: ``torch.multiprocessing.spawn`` (see `start_processes`)."""
    return start_processes(fn, args, nprocs, join, daemon, start_method)


# ``torch.multiprocessing.spawn`` is both the function and, for imports, the module defining it
# (``from torch.multiprocessing.spawn import ProcessRaisedException``): the module is registered
# under its dotted name, as the attribute stays the function.
_spawn_module = _types.ModuleType(__name__ + ".spawn", "Mirrors: ``torch.multiprocessing.spawn``.")
for _name in ("spawn", "start_processes", "ProcessContext", "ProcessException",
              "ProcessRaisedException", "ProcessExitedException"):
    setattr(_spawn_module, _name, globals()[_name])
_sys.modules[_spawn_module.__name__] = _spawn_module
