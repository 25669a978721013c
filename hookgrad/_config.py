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

import itertools
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, Protocol


class Recorder(Protocol):
    """What `bind` and `bind_inplace` tell the recorders on the current thread's stack.

    The recorder protocol (the one door of architecture.md principle 3): every primitive call, every
    in-place write and every custom ``autograd.Function`` call is reported here, in program
    order, on the thread that made it.

    - ``record(prim, inputs, params, outputs, cast)``: after an out-of-place primitive ran;
      `inputs`/`outputs` are tensors, `params` the non-tensor arguments, `cast` the dtype type
      promotion chose to compute in (None: the inputs' own).
    - ``record_inplace(prim, inputs, params, out, target, cast)``: an in-place primitive
      computed `out` and is about to write it into `target` (nothing is written yet).
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

    def record(self, prim: Any, inputs: tuple, params: dict, outputs: tuple,
               cast: Any) -> None: ...

    def record_inplace(self, prim: Any, inputs: tuple, params: dict, out: Any, target: Any,
                       cast: Any) -> None: ...

    def rebase(self, target: Any, out: Any) -> None: ...

    def record_write(self, target: Any) -> None: ...

    def record_function(self, fn_cls: Any, inputs: tuple, outputs: tuple) -> None: ...


# The grad recorder, bottom of every thread's stack (`install_grad_recorder`), as a 0/1-tuple.
_GRAD: tuple = ()


class _ThreadState(threading.local):
    """Per-thread autograd state (NOTE [Per-thread state]); `__init__` runs once per thread.

    NOTE [Recorder tuples]
    `stack` holds the recorders pushed on this thread (forward AD, tracers...). `bind` reads one
    precomputed tuple, `recorders`: the grad recorder (only while grad mode is on) followed by
    `stack`, so a recorded op reads a single thread-local attribute and the grad recorder never
    has to test grad mode. In-place writes, custom Functions and data writes notify
    `all_recorders` (grad recorder always included: it also checks in-place rules under
    ``no_grad``). Grad mode therefore changes only through `set_grad_mode`.
    """

    def __init__(self) -> None:
        self.grad_enabled = True
        self.inference_mode = False
        self.stack: tuple[Recorder, ...] = ()
        # Tuples, not lists: `bind` iterates one on every op; a tuple is the cheapest to iterate.
        self.all_recorders: tuple[Recorder, ...] = _GRAD
        self.recorders: tuple[Recorder, ...] = _GRAD
        # True when some recorder on the stack has ``sees_backward`` (read by the engine).
        self.backward_seen = False
        self.saved_hooks_stack: list[tuple[Any, Any]] = []
        self.saved_hooks_disabled_msg: str | None = None
        # PyTorch's per-thread node counter (the first node of a thread gets 0); `next` on a
        # count is one C call, cheaper than reading and writing an attribute.
        self.seq = itertools.count()
        self.graph_task_stack: list[Any] = []  # innermost running backward pass last
        # NOTE [Gradient layout contract] enforced when stealing a first gradient
        # (``autograd.enforce_grad_layout_policy`` turns it off).
        self.grad_layout_enforced = True


class _ProcessState:
    """Settings PyTorch keeps process-wide (NOTE [Per-thread state])."""

    __slots__ = ("default_dtype", "anomaly", "anomaly_check_nan", "dual_level",
                 "create_graph_warned", "mha_fastpath")

    def __init__(self) -> None:
        self.default_dtype: Any = None  # set by _dtypes at import (float32)
        self.anomaly = False
        self.anomaly_check_nan = True
        self.dual_level = -1
        self.create_graph_warned = False
        self.mha_fastpath = True  # ``torch.backends.mha``'s switch (nn.TransformerEncoder)


STATE = _ThreadState()
GLOBAL = _ProcessState()
# Answered by an upper layer, asked by lower ones: ``hookgrad.compiler`` installs its
# ``is_compiling`` here when imported (nn's TransformerEncoder asks it).
IS_COMPILING: list = [lambda: False]


def set_grad_mode(enabled: bool) -> None:
    """Switch this thread's grad mode (the only writer of ``STATE.grad_enabled``)."""
    state = STATE
    state.grad_enabled = enabled
    state.recorders = state.all_recorders if enabled else state.stack


def set_recorders(stack: tuple) -> None:
    """Replace this thread's pushed recorders (restores a tuple saved from ``STATE.stack``)."""
    state = STATE
    state.stack = stack
    state.all_recorders = _GRAD + stack
    state.recorders = state.all_recorders if state.grad_enabled else stack
    state.backward_seen = any(getattr(r, "sees_backward", False) for r in stack)


def install_grad_recorder(recorder: Recorder) -> None:
    """Put the grad recorder at the bottom of every thread's stack, this one's and new ones'."""
    global _GRAD
    _GRAD = (recorder,)
    set_recorders(STATE.stack)


def add_recorder(recorder: Recorder) -> int:
    """Push `recorder` on this thread's stack (idempotent); return its level (stack index)."""
    stack = STATE.stack
    if recorder not in stack:
        set_recorders(stack + (recorder,))
    return STATE.all_recorders.index(recorder)


def remove_recorder(recorder: Recorder) -> None:
    """Take `recorder` off this thread's stack (a no-op when it is not there)."""
    set_recorders(tuple(r for r in STATE.stack if r is not recorder))


@contextmanager
def recording(recorder: Recorder) -> Iterator[int]:
    """Push `recorder` for the duration of a ``with`` block; yields its level."""
    before = STATE.stack
    level = add_recorder(recorder)
    try:
        yield level
    finally:
        set_recorders(before)
