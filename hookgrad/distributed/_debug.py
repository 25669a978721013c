"""``breakpoint`` (pdb on one rank while the others wait) and ``record_comm`` (a profiling name
for the collectives issued inside a ``with`` block)."""

from __future__ import annotations

import contextlib
import logging
import pdb
import sys
import threading
import traceback
from collections.abc import Iterator
from typing import Any

log = logging.getLogger("hookgrad.distributed")  # torch.distributed's module logger
_profiling = threading.local()  # per thread: per rank on the threads engine
_skips = threading.local()  # breakpoint's call counters (PyTorch's _breakpoint_cache), per rank


class _DistributedPdb(pdb.Pdb):
    """A pdb that reads the terminal even where the launcher replaced this process's stdin."""

    def interaction(self, *args: Any, **kwargs: Any) -> None:
        saved = sys.stdin
        try:
            with open("/dev/stdin") as sys.stdin:
                pdb.Pdb.interaction(self, *args, **kwargs)
        finally:
            sys.stdin = saved


def breakpoint(rank: int = 0, skip: int = 0, timeout_s: float | None = 3600) -> None:  # noqa: A001
    """Stop in pdb on rank ``rank`` only; every rank then waits in a barrier until it goes on.

    ``skip`` ignores the first ``skip`` calls from one place; ``timeout_s`` becomes the
    default group's timeout so the debugging session does not time the barrier out.

    Mirrors: ``torch.distributed.breakpoint``.
    """
    from hookgrad.distributed.collectives import barrier
    from hookgrad.distributed.process_group import _resolve, get_rank

    if skip > 0:
        cache = _skips.__dict__.setdefault("counts", {})
        key = hash(str(traceback.format_exc()))
        cache[key] = cache.get(key, 0) + 1
        if cache[key] <= skip:
            log.warning("Skip the breakpoint, counter=%d", cache[key])
            return
    if timeout_s is not None:
        _resolve(None)._timeout_s = float(timeout_s)
    if get_rank() == rank:
        debugger = _DistributedPdb()
        debugger.message("\n!!! ATTENTION !!!\n\nType 'up' to get to the frame that called "
                         f"dist.breakpoint(rank={rank})\n")
        debugger.set_trace(sys._getframe(1))
    barrier()


def _get_comm_profiling_name() -> str:
    """The name ``record_comm`` set for this thread ("" outside one)."""
    return getattr(_profiling, "name", "")


@contextlib.contextmanager
def record_comm(name: str) -> Iterator[None]:
    """Name the collectives issued inside the block ``name`` for profiling.

    hookgrad keeps the name per thread (`_get_comm_profiling_name`); its profiler does not
    record collectives, so nothing else reads it yet.

    Mirrors: ``torch.distributed.record_comm``.
    """
    previous = _get_comm_profiling_name()
    _profiling.name = name
    try:
        yield
    finally:
        _profiling.name = previous
