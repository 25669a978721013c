"""Process-wide mutable state shared by every layer: grad mode, recorders, saved-tensor hooks.

hookgrad, like PyTorch's autograd on CPU, runs one thread of autograd at a time. The state lives in
one plain object (`STATE`) rather than a ``threading.local`` because attribute access on a plain
object is the cheapest thing the hot path (`bind`) can do; a per-thread state can be swapped in
later behind the same attribute names.

Layer 0: imports nothing from hookgrad.
"""

from __future__ import annotations

from typing import Any, Protocol


class Recorder(Protocol):
    """Something `bind` notifies after every primitive call (grad recording, forward AD, tracing).

    Dependency inversion: `_dispatch` (layer 2) only knows this protocol, the implementations live
    in `autograd/` and `compile/` and register themselves in `STATE.recorders`.
    """

    def record(self, prim: Any, inputs: tuple, params: dict, outputs: tuple) -> None: ...


class _State:
    __slots__ = (
        "grad_enabled",
        "inference_mode",
        "recorders",
        "saved_hooks_stack",
        "saved_hooks_disabled_msg",
        "default_dtype",
        "sequence_nr",
        "graph_task_stack",
        "dual_level",
        "anomaly",
        "create_graph_warned",
    )

    def __init__(self) -> None:
        self.grad_enabled = True
        self.inference_mode = False
        # Tuple, not list: `bind` iterates it on every op and a tuple is the cheapest to iterate.
        self.recorders: tuple[Recorder, ...] = ()
        self.saved_hooks_stack: list[tuple[Any, Any]] = []
        self.saved_hooks_disabled_msg: str | None = None
        self.default_dtype: Any = None  # set by _dtypes at import (float32)
        self.sequence_nr = 0  # per-thread node counter of PyTorch; first node gets 0
        self.graph_task_stack: list[Any] = []  # innermost running backward pass last
        self.dual_level = -1
        self.anomaly = False
        self.create_graph_warned = False

    def next_sequence_nr(self) -> int:
        n = self.sequence_nr
        self.sequence_nr = n + 1
        return n


STATE = _State()


def add_recorder(recorder: Recorder) -> None:
    """Register a recorder that `bind` notifies (idempotent)."""
    if recorder not in STATE.recorders:
        STATE.recorders = STATE.recorders + (recorder,)


def remove_recorder(recorder: Recorder) -> None:
    STATE.recorders = tuple(r for r in STATE.recorders if r is not recorder)
