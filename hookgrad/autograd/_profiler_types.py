"""The enums, configuration and small helpers of ``torch.autograd.profiler``.

`ProfilerActivity`, `ProfilerState` and `DeviceType` carry PyTorch's member names and values (they
are C++ enums there); `hookgrad.profiler` re-exports `ProfilerActivity`, so both paths name one
class as in PyTorch. hookgrad runs on the CPU: `emit_nvtx` fails on entry the way a CPU build of
PyTorch does.
"""

from __future__ import annotations

import bisect
import enum
import warnings
from collections import defaultdict
from collections.abc import Sequence
from typing import Any

__all__ = ["ProfilerActivity", "ProfilerState", "DeviceType", "ProfilerConfig", "EnforceUnique",
           "KinetoStepTracker", "MemRecordsAcc", "emit_nvtx", "kineto_available",
           "MEMORY_EVENT_NAME", "OUT_OF_MEMORY_EVENT_NAME"]

MEMORY_EVENT_NAME = "[memory]"
OUT_OF_MEMORY_EVENT_NAME = "[OutOfMemory]"


class ProfilerActivity(enum.Enum):
    """Which devices to profile. Mirrors: ``torch.profiler.ProfilerActivity``."""

    CPU = 0
    XPU = 1
    MTIA = 4
    CUDA = 2
    HPU = 3
    PrivateUse1 = 5


class ProfilerState(enum.IntEnum):
    """What the legacy profiler records. Mirrors: ``torch.autograd.ProfilerState``."""

    Disabled = 0
    CPU = 1
    CUDA = 2
    NVTX = 3
    ITT = 4
    PRIVATEUSE1 = 5
    KINETO = 6
    KINETO_GPU_FALLBACK = 7
    KINETO_PRIVATEUSE1_FALLBACK = 8
    KINETO_PRIVATEUSE1 = 9


DeviceType = enum.IntEnum("DeviceType", [  # PyTorch's c10::DeviceType numbering
    ("CPU", 0), ("CUDA", 1), ("MKLDNN", 2), ("OPENGL", 3), ("OPENCL", 4), ("IDEEP", 5),
    ("HIP", 6), ("FPGA", 7), ("MAIA", 8), ("XLA", 9), ("Vulkan", 10), ("Metal", 11),
    ("XPU", 12), ("MPS", 13), ("Meta", 14), ("HPU", 15), ("VE", 16), ("Lazy", 17),
    ("IPU", 18), ("MTIA", 19), ("PrivateUse1", 20)])
DeviceType.__doc__ = "Device kinds, numbered as PyTorch's. Mirrors: ``torch.autograd.DeviceType``."


class ProfilerConfig:
    """The settings a profiler session starts with (a record of its arguments).

    Mirrors: ``torch.autograd.ProfilerConfig``.
    """

    def __init__(self, state: ProfilerState, report_input_shapes: bool = False,
                 profile_memory: bool = False, with_stack: bool = False,
                 with_flops: bool = False, with_modules: bool = False,
                 experimental_config: Any = None, trace_id: str = "") -> None:
        self.state = ProfilerState(state)
        self.report_input_shapes = report_input_shapes
        self.profile_memory = profile_memory
        self.with_stack = with_stack
        self.with_flops = with_flops
        self.with_modules = with_modules
        self.experimental_config = experimental_config
        self.trace_id = trace_id


def kineto_available() -> bool:
    """True: the ``torch.profiler`` API (schedules, steps, traces) is available.

    Mirrors: ``torch.autograd.kineto_available``.
    """
    return True


class EnforceUnique:
    """Raises ``RuntimeError`` when a key is seen twice.

    Example:
        >>> from hookgrad.autograd.profiler import EnforceUnique
        >>> u = EnforceUnique(); u.see("a", 1); u.see("a", 2)
        >>> u.see("a", 1)
        Traceback (most recent call last):
        RuntimeError: duplicate key: ('a', 1)

    Mirrors: ``torch.autograd.profiler.EnforceUnique``.
    """

    def __init__(self) -> None:
        self.seen: set = set()

    def see(self, *key: Any) -> None:
        """Record `key`; raise if it was recorded before."""
        if key in self.seen:
            raise RuntimeError("duplicate key: " + str(key))
        self.seen.add(key)


class KinetoStepTracker:
    """A global step count over several requesters (optimizers, the profiler): the maximum.

    Mirrors: ``torch.autograd.profiler.KinetoStepTracker``.
    """

    _current_step = 0
    _step_dict: dict[str, int] = defaultdict(int)

    @classmethod
    def init_step_count(cls, requester: str) -> None:
        """Start `requester` at the current global step."""
        cls._step_dict[requester] = cls._current_step

    @classmethod
    def erase_step_count(cls, requester: str) -> bool:
        """Forget `requester`; whether it was known."""
        return cls._step_dict.pop(requester, None) is not None

    @classmethod
    def increment_step(cls, requester: str) -> int:
        """Count a step of `requester`; the global step (warns when it jumps by more than one)."""
        if requester not in cls._step_dict:
            cls.init_step_count(requester)
        cls._step_dict[requester] += 1
        new_step = max(cls._step_dict.values())
        if new_step > cls._current_step:
            if new_step - cls._current_step > 1:
                warnings.warn("Profiler step count has increased more than 1 - current_step = "
                              f"{cls._current_step} step dict =  {cls._step_dict}", stacklevel=2)
            cls._current_step = new_step
        return cls._current_step

    @classmethod
    def current_step(cls) -> int:
        """The latest step of any requester."""
        return cls._current_step


class MemRecordsAcc:
    """Finds memory records (pairs whose first item has ``start_ns()``) inside an interval.

    Mirrors: ``torch.autograd.profiler_util.MemRecordsAcc``.
    """

    def __init__(self, mem_records: Sequence[Any]) -> None:
        self._mem_records = mem_records
        order = sorted((r[0].start_ns(), i) for i, r in enumerate(mem_records))
        self._start_nses = [s for s, _ in order]
        self._indices = [i for _, i in order]

    def in_interval(self, start_ns: int, end_ns: int) -> Any:
        """Yield the records starting in ``[start_ns, end_ns]``."""
        lo = bisect.bisect_left(self._start_nses, start_ns)
        hi = bisect.bisect_right(self._start_nses, end_ns)
        for i in range(lo, hi):
            yield self._mem_records[self._indices[i]]


class emit_nvtx:  # noqa: N801 - PyTorch's name
    """NVTX ranges for nvprof: needs CUDA, so entering it fails as on a CPU build of PyTorch.

    Mirrors: ``torch.autograd.profiler.emit_nvtx``.
    """

    def __init__(self, enabled: bool = True, record_shapes: bool = False) -> None:
        self.enabled = enabled
        self.entered = False
        self.record_shapes = record_shapes

    def __enter__(self) -> None:
        if not self.enabled:
            return
        if self.entered:
            raise RuntimeError("NVTX annotation context manager is not reentrant")
        self.entered = True
        raise AssertionError("Torch not compiled with CUDA enabled")

    def __exit__(self, *args: object) -> bool:
        if self.enabled:
            self.entered = False
        return False
