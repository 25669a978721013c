"""What a `HookTrace` remembers besides the events: one record per traced hook, per module
that ran, per optimizer that stepped and per backward pass; the inputs of the silent-hook
reasons (`hookgrad.hooktools.silent`).
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass, field
from typing import Any

__all__ = ["HookEntry", "ModuleRecord", "BackwardRun", "ENGINE_KINDS"]

# Hooks the autograd engine runs (their firing depends on the graph of a backward pass).
ENGINE_KINDS = ("tensor", "post_accumulate", "node.pre", "node.post")


def _ref(obj: Any) -> Any:
    """A weak reference when the object allows one (PyTorch's nodes do not: kept strongly)."""
    if obj is None:
        return lambda: None
    try:
        return weakref.ref(obj)
    except TypeError:
        return lambda: obj


@dataclass(eq=False)
class HookEntry:
    """One hook the trace wrapped: where it lives, what it belongs to, and what happened to it."""

    kind: str
    owner: str
    hook: str
    site: str
    table: Any  # the dict holding it (None until known for hooks wrapped at registration)
    wrapper: Any
    obj_ref: Any  # weak reference to the tensor/module/optimizer/node it is registered on
    reg_seq: int  # -1: registered before the trace
    node: Any = None  # a non-leaf tensor's grad_fn, kept until the hook fires
    fired: int = 0
    removed: bool | None = None  # settled when the trace closes
    statuses: list = field(default_factory=list)  # (backward run index, status)

    @classmethod
    def make(cls, kind: str, owner: str, hook: str, site: str, table: Any, wrapper: Any,
             obj: Any, reg_seq: int) -> HookEntry:
        node = getattr(obj, "grad_fn", None) if kind == "tensor" else None
        return cls(kind, owner, hook, site, table, wrapper, _ref(obj), reg_seq, node)

    @property
    def obj(self) -> Any:
        return self.obj_ref()

    def is_removed(self) -> bool:
        if self.removed is not None:
            return self.removed
        return self.table is not None and not any(v is self.wrapper for v in
                                                  list(self.table.values()))


@dataclass(eq=False)
class ModuleRecord:
    """Calls of one module while the trace was open."""

    name: str
    started: int = 0
    finished: int = 0
    last_seq: int = -1
    grad_on: int = 0  # calls made with grad mode on
    inputs_grad: int = 0  # calls with an input tensor that requires grad
    outputs_grad: int = 0  # calls whose output requires grad
    out_nodes: list = field(default_factory=list)  # grad_fns of the last call's outputs
    reached: int = 0  # backward passes that reached the last outputs


@dataclass(eq=False)
class BackwardRun:
    """One ``backward()``/``autograd.grad()`` call seen by the trace."""

    index: int
    api: str  # "backward" or "grad"
    start_seq: int
    has_inputs: bool
    end_seq: int = -1
    error: str | None = None
    nodes: dict | None = None  # id -> node while the pass runs (dropped at its end)
    targets: set = field(default_factory=set)  # ids of the nodes ``inputs=`` stop at
