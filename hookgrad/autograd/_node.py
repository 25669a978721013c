"""`Node` (what ``tensor.grad_fn`` is) and `GradientEdge`: the base of every backward node.

NOTE [Node hooks]
A node carries four hook tables, all `HookRegistry`s created on first registration:
``_pre_hooks`` (``register_prehook``), ``_post_hooks`` (``register_hook``), ``_tensor_hooks``
(a list of ``(output_nr, registry)`` groups in the order the *first* hook of each output tensor
was registered, spec §1.3 step 1) and ``_retain_hooks`` (``output_nr -> weakref(tensor)``,
step 2). The engine runs them in `autograd/_hook_points.py`; nodes never call hooks themselves.

The public facade ``hookgrad.autograd.graph`` re-exports these; the engine and the node kinds
import them from here, below the facade, so no import circle runs through it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

from hookgrad._config import STATE
from hookgrad.utils.hooks import HookRegistry, RemovableHandle

__all__ = ["Node", "GradientEdge"]


class Node:
    """A node of the backward graph.

    Mirrors: ``torch.autograd.graph.Node``.
    """

    __slots__ = (
        "_seq",
        "_next_edges",
        "_pre_hooks",
        "_post_hooks",
        "_tensor_hooks",
        "_retain_hooks",
        "_metadata",
        "__weakref__",
    )

    def __init__(self, next_edges: tuple = (), seq: int | None = None) -> None:
        if seq is None:
            seq = next(STATE.seq)
        self._seq = seq
        self._next_edges = next_edges
        self._pre_hooks: HookRegistry | None = None
        self._post_hooks: HookRegistry | None = None
        self._tensor_hooks: list | None = None
        self._retain_hooks: dict | None = None
        self._metadata: dict | None = None

    # ------------------------------------------------------------------ identity
    def name(self) -> str:
        return type(self).__name__

    def _sequence_nr(self) -> int:
        return self._seq

    @property
    def next_functions(self) -> tuple:
        return tuple(self._next_edges)

    @property
    def metadata(self) -> dict:
        md = self._metadata
        if md is None:
            md = self._metadata = {}
        return md

    def _num_slots(self) -> int:
        """Number of input-buffer slots (= forward outputs)."""
        return 1

    def input_metadata(self) -> list | None:
        """``(shape, array dtype)`` per next edge, to conform gradients; None to skip."""
        return None

    # ------------------------------------------------------------------ hooks
    def register_prehook(self, fn: Callable[..., Any]) -> RemovableHandle:
        """Register a hook that runs before this node computes its gradients (spec §4.2).

        Called as ``fn(grad_outputs: tuple[Tensor | None, ...]) -> tuple | None`` with one entry
        per forward output of the node (``None`` where no gradient arrived), after the tensor
        hooks and ``retain_grad`` of the node's outputs. Returning ``None`` keeps the values; a
        tuple of the same length replaces them for later pre-hooks, for the node's computation
        and for the ``grad_outputs`` its post-hooks see (spec §1.4 validation). Only runs when
        the node executes (not when it is merely a capture point of ``autograd.grad``).

        Returns:
            A `RemovableHandle`.

        Mirrors: ``torch.autograd.graph.Node.register_prehook``.
        """
        if self._pre_hooks is None:
            self._pre_hooks = HookRegistry()
        return self._pre_hooks.add(fn)

    def register_hook(self, fn: Callable[..., Any]) -> RemovableHandle:
        """Register a hook that runs after this node computed its gradients (spec §4.3).

        Called as ``fn(grad_inputs: tuple, grad_outputs: tuple) -> tuple | None``:
        ``grad_inputs`` has one entry per ``next_functions`` edge (``None`` for edges
        ``(None, 0)``; empty for an AccumulateGrad) and ``grad_outputs`` is the slot tuple after
        pre-hooks. Returning ``None`` keeps ``grad_inputs``; a tuple of the same length replaces
        what flows to the next nodes (an entry may be ``None`` to drop that gradient).

        Returns:
            A `RemovableHandle`.

        Mirrors: ``torch.autograd.graph.Node.register_hook``.
        """
        if self._post_hooks is None:
            self._post_hooks = HookRegistry()
        return self._post_hooks.add(fn)

    def _register_tensor_hooks(self, output_nr: int, registry: HookRegistry) -> None:
        if self._tensor_hooks is None:
            self._tensor_hooks = []
        self._tensor_hooks.append((output_nr, registry))

    def _tensor_hook_groups(self) -> list:
        return self._tensor_hooks or []

    def _observed_hook_registries(self) -> list:
        """Hook tables stored on tensors that fire at this node (for `utils.hooks_info`)."""
        return [(f"tensor_hooks[{slot}]", reg) for slot, reg in self._tensor_hook_groups()]

    def _has_hooks(self) -> bool:
        return bool(
            self._pre_hooks or self._post_hooks or self._tensor_hooks or self._retain_hooks
        )

    # ------------------------------------------------------------------ execution
    def apply(self, grads: tuple) -> tuple:  # pragma: no cover - abstract
        raise NotImplementedError

    def release_saved(self) -> None:
        """Free saved tensors after a non-retained pass (no-op for nodes that save nothing)."""

    def __call__(self, *grads: Any) -> Any:
        out = self.apply(tuple(grads))
        return out[0] if len(out) == 1 else out

    def __repr__(self) -> str:
        return f"<{type(self).__name__} object at {hex(id(self))}>"


class GradientEdge(NamedTuple):
    """The node and input slot a gradient flows into.

    ``ownership_token`` exists for PyTorch parity (it keeps a C++ graph alive there); hookgrad
    nodes are ordinary Python objects, so it is always None.

    Mirrors: ``torch.autograd.graph.GradientEdge``.
    """

    node: Any
    output_nr: int
    ownership_token: Any = None
