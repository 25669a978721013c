"""State shared by every layer: per-thread autograd state and a few process-wide settings.

NOTE [Per-thread state]
As in PyTorch, grad mode, inference mode, the recorder stack, the saved-tensor-hook stack (and
its disabled flag), the running graph tasks and the node sequence counter belong to the thread
that uses them: `STATE` is a ``threading.local`` whose attributes a new thread sees at PyTorch's
defaults (grad enabled, no inference mode, no saved-tensor hooks, only the base recorders).
The default dtype, anomaly mode and the forward-AD level are process-wide in PyTorch, and live
in `GLOBAL`. Reading an attribute of a ``threading.local`` costs about 30 ns more than of a
plain object; the hot path reads at most a handful per op.

Layer 0: imports nothing from hookgrad.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, Protocol


class Recorder(Protocol):
    """What `bind` and `bind_inplace` tell the recorders on the current thread's stack.

    The recorder protocol (the one door of design.md principle 3): every primitive call, every
    in-place write and every custom ``autograd.Function`` call is reported here, in program
    order, on the thread that made it.

    - ``record(prim, inputs, params, outputs)``: after an out-of-place primitive ran;
      `inputs`/`outputs` are tensors, `params` the non-tensor arguments.
    - ``record_inplace(prim, inputs, params, out, target)``: an in-place primitive computed
      `out` and is about to write it into `target` (nothing is written yet).
    - ``rebase(target, out)``: the write happened and the version counter was bumped; the
      autograd identity of `out` may now move to `target`. Each ``record_inplace`` is followed
      by exactly one ``rebase`` on the same thread.
    - ``record_write(target)``: `target`'s data was overwritten outside any primitive (an
      optimizer update, ``.grad`` accumulation, a random fill); its version was bumped.
    - ``record_function(fn_cls, inputs, outputs)``: a custom ``autograd.Function`` (or the
      identity node of module backward hooks) produced `outputs` from `inputs`; the ops of
      its forward were reported before, as they ran with grad mode off.
    - ``sees_backward``: True when the recorder must see the hookgrad ops of backward rules
      (forward AD over reverse, tracing, compiled autograd). The engine then hands rules
      hookgrad operations instead of raw-array ones (NOTE [Rule operations]).

    Recorders form a per-thread stack with levels (`recording`): an inner recorder (a trace
    inside a trace, a nested forward-AD level) is pushed above the outer ones and popped first.
    Dependency inversion: `_dispatch` (layer 2) only knows this protocol; the implementations
    live in `autograd/` and `compile/`.
    """

    sees_backward: bool

    def record(self, prim: Any, inputs: tuple, params: dict, outputs: tuple) -> None: ...

    def record_inplace(self, prim: Any, inputs: tuple, params: dict, out: Any,
                       target: Any) -> None: ...

    def rebase(self, target: Any, out: Any) -> None: ...

    def record_write(self, target: Any) -> None: ...

    def record_function(self, fn_cls: Any, inputs: tuple, outputs: tuple) -> None: ...


# Recorders present on every thread from its start (the grad recorder), in stack order.
_BASE_RECORDERS: list[Recorder] = []


class _ThreadState(threading.local):
    """Per-thread autograd state (NOTE [Per-thread state]); `__init__` runs once per thread."""

    def __init__(self) -> None:
        self.grad_enabled = True
        self.inference_mode = False
        # Tuple, not list: `bind` iterates it on every op and a tuple is the cheapest to iterate.
        self.recorders: tuple[Recorder, ...] = tuple(_BASE_RECORDERS)
        # True when some recorder on the stack has ``sees_backward`` (read by the engine).
        self.backward_seen = False
        self.saved_hooks_stack: list[tuple[Any, Any]] = []
        self.saved_hooks_disabled_msg: str | None = None
        self.sequence_nr = 0  # per-thread node counter of PyTorch; first node gets 0
        self.graph_task_stack: list[Any] = []  # innermost running backward pass last

    def next_sequence_nr(self) -> int:
        n = self.sequence_nr
        self.sequence_nr = n + 1
        return n


class _ProcessState:
    """Settings PyTorch keeps process-wide (NOTE [Per-thread state])."""

    __slots__ = ("default_dtype", "anomaly", "anomaly_check_nan", "dual_level",
                 "create_graph_warned")

    def __init__(self) -> None:
        self.default_dtype: Any = None  # set by _dtypes at import (float32)
        self.anomaly = False
        self.anomaly_check_nan = True
        self.dual_level = -1
        self.create_graph_warned = False


STATE = _ThreadState()
GLOBAL = _ProcessState()


def set_recorders(recorders: tuple) -> None:
    """Replace this thread's recorder stack (restores a stack saved from `STATE.recorders`)."""
    STATE.recorders = recorders
    STATE.backward_seen = any(getattr(r, "sees_backward", False) for r in recorders)


def install_base_recorder(recorder: Recorder) -> None:
    """Put `recorder` at the bottom of every thread's stack, this one's and future ones'."""
    if recorder not in _BASE_RECORDERS:
        _BASE_RECORDERS.append(recorder)
    if recorder not in STATE.recorders:
        set_recorders((recorder,) + STATE.recorders)


def add_recorder(recorder: Recorder) -> int:
    """Push `recorder` on this thread's stack (idempotent); return its level (stack index)."""
    stack = STATE.recorders
    if recorder not in stack:
        set_recorders(stack + (recorder,))
    return STATE.recorders.index(recorder)


def remove_recorder(recorder: Recorder) -> None:
    """Take `recorder` off this thread's stack (a no-op when it is not there)."""
    set_recorders(tuple(r for r in STATE.recorders if r is not recorder))


@contextmanager
def recording(recorder: Recorder) -> Iterator[int]:
    """Push `recorder` for the duration of a ``with`` block; yields its level."""
    before = STATE.recorders
    level = add_recorder(recorder)
    try:
        yield level
    finally:
        set_recorders(before)
