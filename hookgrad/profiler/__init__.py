"""``torch.profiler``: the `profile` most code uses, over hookgrad's CPU op profiler.

`profile` records CPU events exactly as ``hookgrad.autograd.profiler.profile`` does (see that
module for what is recorded and what is not); ``activities`` other than CPU are accepted and
record nothing (hookgrad runs on the CPU). A `schedule` with ``step()`` is honoured: events are
kept only in the steps whose action records, and ``on_trace_ready(prof)`` runs at the end of
each ``RECORD_AND_SAVE`` step.

Example:
    >>> import hookgrad as torch
    >>> from hookgrad.profiler import ProfilerActivity, profile, record_function
    >>> with profile(activities=[ProfilerActivity.CPU]) as prof:
    ...     with record_function("matmul"):
    ...         _ = torch.ones(2, 2) @ torch.ones(2, 2)
    >>> sorted(e.key for e in prof.key_averages())
    ['aten::mm', 'matmul']

Mirrors: ``torch.profiler``.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterable
from typing import Any

from hookgrad.autograd import profiler as _autograd_profiler
from hookgrad.autograd.profiler import EventList, ProfilerActivity, record_function
from hookgrad.autograd._profiler_types import kineto_available
from hookgrad.profiler._trace_handler import tensorboard_trace_handler

__all__ = [
    "profile", "record_function", "ProfilerActivity", "ProfilerAction", "schedule",
    "EventList", "tensorboard_trace_handler", "kineto_available"
]


class ProfilerAction(enum.Enum):
    """What the profiler does in one step. Mirrors: ``torch.profiler.ProfilerAction``."""

    NONE = 0
    WARMUP = 1
    RECORD = 2
    RECORD_AND_SAVE = 3


def schedule(*, wait: int, warmup: int, active: int, repeat: int = 0,
             skip_first: int = 0, skip_first_wait: int = 0) -> Callable[[int], ProfilerAction]:
    """The step -> action function of PyTorch's profiler schedule.

    Mirrors: ``torch.profiler.schedule``.
    """
    if wait < 0 or warmup < 0 or active <= 0 or repeat < 0 or skip_first < 0:
        raise AssertionError("Invalid profiler schedule arguments")

    def schedule_fn(step: int) -> ProfilerAction:
        if step < skip_first:
            return ProfilerAction.NONE
        step -= skip_first
        span = wait + warmup + active
        if repeat > 0 and step // span >= repeat:
            return ProfilerAction.NONE
        mod = step % span
        if mod < wait:
            return ProfilerAction.NONE
        if mod < wait + warmup:
            return ProfilerAction.WARMUP
        return ProfilerAction.RECORD if mod < span - 1 else ProfilerAction.RECORD_AND_SAVE

    return schedule_fn


def _always_record(step: int) -> ProfilerAction:
    return ProfilerAction.RECORD


_RECORDING = (ProfilerAction.RECORD, ProfilerAction.RECORD_AND_SAVE)


class profile:  # noqa: N801 - PyTorch's name
    """Profiler context manager with optional `schedule` and ``step()``.

    Mirrors: ``torch.profiler.profile``.
    """

    def __init__(self, *, activities: Iterable[ProfilerActivity] | None = None,
                 schedule: Callable[[int], ProfilerAction] | None = None,
                 on_trace_ready: Callable[[profile], Any] | None = None,
                 record_shapes: bool = False, **kwargs: Any) -> None:
        acts = set(activities) if activities is not None else {ProfilerActivity.CPU}
        self.activities = acts
        self.schedule = schedule or _always_record
        self.on_trace_ready = on_trace_ready
        self.record_shapes = record_shapes
        self.step_num = 0
        self.profiler: _autograd_profiler.profile | None = None
        self._events = EventList()
        self._recording: _autograd_profiler.profile | None = None

    def _start_recording(self) -> None:
        if ProfilerActivity.CPU in self.activities and self._recording is None:
            self._recording = _autograd_profiler.profile(record_shapes=self.record_shapes)
            self._recording.__enter__()

    def _stop_recording(self) -> None:
        if self._recording is not None:
            self._recording.__exit__(None, None, None)
            self.profiler = self._recording
            self._events = EventList(self._recording.function_events or ())
            self._recording = None

    def start(self) -> None:
        if self.schedule(self.step_num) in _RECORDING:
            self._start_recording()

    def stop(self) -> None:
        action = self.schedule(self.step_num)
        self._stop_recording()
        if action in _RECORDING and self.on_trace_ready is not None:
            self.on_trace_ready(self)

    def step(self) -> None:
        """Finish the current step and start the next one according to the schedule."""
        prev = self.schedule(self.step_num)
        self.step_num += 1
        now = self.schedule(self.step_num)
        if prev == ProfilerAction.RECORD_AND_SAVE or (prev in _RECORDING and now not in
                                                      _RECORDING):
            self._stop_recording()
            if prev == ProfilerAction.RECORD_AND_SAVE and self.on_trace_ready is not None:
                self.on_trace_ready(self)
        if now in _RECORDING:
            self._start_recording()

    def __enter__(self) -> profile:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def events(self) -> EventList:
        return self._events

    def key_averages(self, group_by_input_shape: bool = False,
                     group_by_stack_n: int = 0) -> EventList:
        return self._events.key_averages(group_by_input_shape, group_by_stack_n)

    def export_chrome_trace(self, path: str) -> None:
        if self.profiler is None:
            raise RuntimeError("Profiler didn't finish running")
        self.profiler.export_chrome_trace(path)



def supported_activities() -> set:
    """The activities this build can profile: the CPU only.
    Mirrors: ``torch.profiler.supported_activities``."""
    return {ProfilerActivity.CPU}


from hookgrad.profiler import itt  # noqa: E402  (torch.profiler.itt is reachable as an attribute)

# PyTorch's ``__all__`` also lists these
__all__ += ["supported_activities"]
