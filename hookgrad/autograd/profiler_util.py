"""The event containers of the profiler, at PyTorch's module path.

Mirrors: ``torch.autograd.profiler_util``.
"""

from __future__ import annotations

from hookgrad.autograd._profiler_types import MemRecordsAcc
from hookgrad.autograd.profiler import EventList, FunctionEvent, FunctionEventAvg

__all__ = ["EventList", "FunctionEvent", "FunctionEventAvg", "MemRecordsAcc"]
