"""A CPU profiler: time every primitive call and every `record_function` range.

Built on `TorchDispatchMode`: while a `profile` is active, each primitive call becomes a
`FunctionEvent` named ``aten::<name>`` (the name of its ATen twin, see
``hookgrad.utils._python_dispatch``) timed with `time.perf_counter`, and each `record_function`
block an event with its own name. An event's *self* time excludes the events nested in it.
Times are microseconds, as in PyTorch. Backward ops are recorded too (a pushed mode makes
derivative formulas run through the primitives). Not provided: CUDA/memory columns, stacks,
chrome traces of nested threads (`export_chrome_trace` writes the events of this thread).

Example:
    >>> import hookgrad as torch
    >>> from hookgrad.autograd import profiler
    >>> with profiler.profile() as prof:
    ...     with profiler.record_function("block"):
    ...         _ = torch.ones(2, 3) @ torch.ones(3, 4)
    >>> [(e.key, e.count) for e in prof.key_averages()]
    [('block', 1), ('aten::mm', 1)]

Mirrors: ``torch.autograd.profiler``.
"""

from __future__ import annotations

import functools
import json
import threading
import time
from typing import Any

import logging

from hookgrad.autograd._profiler_types import (  # noqa: F401 - torch.autograd.profiler's names
    MEMORY_EVENT_NAME,
    OUT_OF_MEMORY_EVENT_NAME,
    DeviceType,
    EnforceUnique,
    KinetoStepTracker,
    MemRecordsAcc,
    ProfilerActivity,
    ProfilerConfig,
    ProfilerState,
    emit_nvtx,
    kineto_available,
)
from hookgrad.utils._python_dispatch import TorchDispatchMode

__all__ = [
    "profile", "record_function", "FunctionEvent", "FunctionEventAvg", "EventList",
    "EnforceUnique", "KinetoStepTracker", "emit_nvtx", "kineto_available"
]

log = logging.getLogger(__name__)

_local = threading.local()


def _active() -> list:
    act = getattr(_local, "profilers", None)
    if act is None:
        act = _local.profilers = []
    return act


def _now_us() -> float:
    return time.perf_counter_ns() / 1000.0


class FunctionEvent:
    """One timed op or range. Mirrors: ``torch.autograd.profiler_util.FunctionEvent``."""

    def __init__(self, id: int, name: str, start_us: float, input_shapes: list | None = None,
                 parent: FunctionEvent | None = None) -> None:
        self.id = id
        self.name = name
        self.start_us = start_us
        self.end_us = start_us
        self.input_shapes = input_shapes or []
        self.cpu_parent = parent
        self.cpu_children: list[FunctionEvent] = []
        self.count = 1

    @property
    def key(self) -> str:
        return self.name

    @property
    def cpu_time_total(self) -> float:
        return self.end_us - self.start_us

    @property
    def self_cpu_time_total(self) -> float:
        return self.cpu_time_total - sum(c.cpu_time_total for c in self.cpu_children)

    @property
    def cpu_time(self) -> float:
        return self.cpu_time_total

    def __repr__(self) -> str:
        return (f"<FunctionEvent id={self.id} name={self.name} "
                f"cpu_time={_format_time(self.cpu_time_total)}>")


class FunctionEventAvg:
    """Events of one key, summed. Mirrors: ``torch.autograd.profiler_util.FunctionEventAvg``."""

    def __init__(self, key: str, input_shapes: Any = None) -> None:
        self.key = key
        self.input_shapes = input_shapes
        self.count = 0
        self.cpu_time_total = 0.0
        self.self_cpu_time_total = 0.0

    def add(self, ev: FunctionEvent) -> FunctionEventAvg:
        self.count += ev.count
        self.cpu_time_total += ev.cpu_time_total
        self.self_cpu_time_total += ev.self_cpu_time_total
        return self

    @property
    def cpu_time(self) -> float:
        return self.cpu_time_total / self.count if self.count else 0.0

    def __repr__(self) -> str:
        return (f"<FunctionEventAvg key={self.key} self_cpu_time="
                f"{_format_time(self.self_cpu_time_total)} cpu_time={_format_time(self.cpu_time)}"
                f" count={self.count}>")


def _format_time(us: float) -> str:
    if us >= 1e6:
        return f"{us / 1e6:.3f}s"
    if us >= 1e3:
        return f"{us / 1e3:.3f}ms"
    return f"{us:.3f}us"


_SORT_KEYS = ("cpu_time_total", "self_cpu_time_total", "cpu_time", "count")
_HEADERS = ("Name", "Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg",
            "# of Calls")


class EventList(list):
    """A list of events with PyTorch's summaries. Mirrors: ``profiler_util.EventList``."""

    def key_averages(self, group_by_input_shape: bool = False,
                     group_by_stack_n: int = 0) -> EventList:
        groups: dict = {}
        for ev in self:
            shapes = str(ev.input_shapes) if group_by_input_shape else None
            key = (ev.key, shapes)
            if key not in groups:
                groups[key] = FunctionEventAvg(ev.key, ev.input_shapes if shapes else None)
            groups[key].add(ev)
        return EventList(groups.values())

    def total_average(self) -> FunctionEventAvg:
        total = FunctionEventAvg("Total")
        for ev in self:
            total.count += ev.count
            total.cpu_time_total += ev.cpu_time_total
            total.self_cpu_time_total += ev.self_cpu_time_total
        return total

    @property
    def self_cpu_time_total(self) -> float:
        return sum(ev.self_cpu_time_total for ev in self)

    def table(self, sort_by: str | None = None, row_limit: int = 100, max_src_column_width: int = 75,
              max_name_column_width: int = 55, header: str | None = None,
              top_level_events_only: bool = False, **kwargs: Any) -> str:
        """The summary table PyTorch prints (CPU columns only)."""
        if sort_by is not None and sort_by not in _SORT_KEYS:
            raise AttributeError(f"'FunctionEventAvg' object has no attribute '{sort_by}'")
        rows = list(self)
        if sort_by is not None:
            rows.sort(key=lambda e: getattr(e, sort_by), reverse=True)
        if row_limit > 0:
            rows = rows[:row_limit]
        self_total = self.self_cpu_time_total or 1.0
        lines = []
        for e in rows:
            name = e.key if len(e.key) <= max_name_column_width else (
                e.key[: max_name_column_width - 3] + "...")
            lines.append((name, f"{100 * e.self_cpu_time_total / self_total:.2f}%",
                          _format_time(e.self_cpu_time_total),
                          f"{100 * e.cpu_time_total / self_total:.2f}%",
                          _format_time(e.cpu_time_total), _format_time(e.cpu_time),
                          str(e.count)))
        widths = [max([len(h)] + [len(r[i]) for r in lines]) + 2 for i, h in enumerate(_HEADERS)]
        rule = "  ".join("-" * w for w in widths)
        out = [header] if header else []
        out += [rule, "  ".join(h.rjust(w) for h, w in zip(_HEADERS, widths)), rule]
        out += ["  ".join(c.rjust(w) for c, w in zip(r, widths)) for r in lines]
        out += [rule, f"Self CPU time total: {_format_time(self.self_cpu_time_total)}", ""]
        return "\n".join(out)


class profile(TorchDispatchMode):  # noqa: N801 - PyTorch's name
    """Context manager recording a `FunctionEvent` per primitive call and `record_function`.

    Args:
        enabled: record nothing when False.
        record_shapes: keep each op's input shapes (for ``key_averages(group_by_input_shape)``).
        Other PyTorch arguments (``use_cuda``, ``profile_memory``, ``with_stack``...) are
        accepted and ignored.

    Mirrors: ``torch.autograd.profiler.profile``.
    """

    def __init__(self, enabled: bool = True, *, record_shapes: bool = False, **kwargs: Any) -> None:
        self.enabled = enabled
        self.record_shapes = record_shapes
        self.function_events: EventList | None = None
        self._events = EventList()
        self._open: list[FunctionEvent] = []
        self._next_id = 0

    # -- recording
    def _begin(self, name: str, shapes: list | None = None) -> FunctionEvent:
        parent = self._open[-1] if self._open else None
        ev = FunctionEvent(self._next_id, name, _now_us(), shapes, parent)
        self._next_id += 1
        if parent is not None:
            parent.cpu_children.append(ev)
        self._open.append(ev)
        self._events.append(ev)
        return ev

    def _end(self, ev: FunctionEvent) -> None:
        ev.end_us = _now_us()
        if self._open and self._open[-1] is ev:
            self._open.pop()
        elif ev in self._open:
            self._open.remove(ev)

    def __torch_dispatch__(self, func: Any, types: tuple, args: tuple = (),
                           kwargs: dict | None = None) -> Any:
        shapes = [list(getattr(a, "shape", ())) for a in args] if self.record_shapes else None
        ev = self._begin(func.name().split(".")[0], shapes)
        try:
            return func(*args, **(kwargs or {}))
        finally:
            self._end(ev)

    def __enter__(self) -> profile:
        if self.enabled:
            self._events = EventList()
            self._open = []
            _active().append(self)
            super().__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        if not self.enabled:
            return
        super().__exit__(*exc)
        _active().remove(self)
        self.function_events = self._events

    # -- results
    def _require(self) -> EventList:
        if self.function_events is None:
            raise RuntimeError("Profiler didn't finish running")
        return self.function_events

    def events(self) -> EventList:
        return self._require()

    def key_averages(self, group_by_input_shape: bool = False,
                     group_by_stack_n: int = 0) -> EventList:
        return self._require().key_averages(group_by_input_shape, group_by_stack_n)

    def table(self, **kwargs: Any) -> str:
        return self._require().table(**kwargs)

    def total_average(self) -> FunctionEventAvg:
        return self._require().total_average()

    @property
    def self_cpu_time_total(self) -> float:
        return self._require().self_cpu_time_total

    def export_chrome_trace(self, path: str) -> None:
        """Write the events in Chrome's trace-event JSON format (``chrome://tracing``)."""
        trace = [{"name": e.name, "ph": "X", "ts": e.start_us, "dur": e.cpu_time_total,
                  "pid": 0, "tid": 0, "cat": "cpu_op"} for e in self._require()]
        with open(path, "w") as fh:
            json.dump({"traceEvents": trace}, fh)


class record_function:  # noqa: N801 - PyTorch's name
    """Context manager and decorator labelling a range in the active profilers.

    Mirrors: ``torch.autograd.profiler.record_function``.
    """

    def __init__(self, name: str, args: str | None = None) -> None:
        self.name = name
        self.args = args
        self._events: list = []

    def __enter__(self) -> record_function:
        self._events = [(p, p._begin(self.name)) for p in _active()]
        return self

    def __exit__(self, *exc: object) -> None:
        for prof, ev in self._events:
            prof._end(ev)
        self._events = []

    def __call__(self, fn: Any) -> Any:
        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with record_function(self.name, self.args):
                return fn(*args, **kwargs)

        return wrapper

# PyTorch's ``__all__`` also lists these
__all__ += ["emit_itt", "load_nvprof", "parse_nvprof_trace", "MemRecordsAcc"]
