"""``hookgrad.cuda.nvtx``: NVTX range markers (no profiler to mark without CUDA).

Mirrors: ``torch.cuda.nvtx`` on a CPU-only build, where the functions raise RuntimeError.
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Any, Iterator

__all__ = ["range_push", "range_pop", "mark", "range"]


def _unavailable(*args: Any, **kwargs: Any) -> Any:
    raise RuntimeError("NVTX functions not installed. Are you sure you have a CUDA build?")


range_push = range_pop = mark = _unavailable


@contextmanager
def range(msg: str, *args: Any, **kwargs: Any) -> Iterator[None]:  # noqa: A001 - torch's name
    """Mirrors: ``torch.cuda.nvtx.range``."""
    range_push(msg.format(*args, **kwargs))
    yield
    range_pop()
