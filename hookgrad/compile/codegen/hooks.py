"""Intermediate tensor hooks inside a joint program (NOTE [Hooks in the generated backward]).

NOTE [Hooks in the generated backward]
A ``register_hook`` operator (spec §4, compiled autograd off) returns its tensor itself, so in
a joint program its node is an *alias* of its *base* value: every gradient reaching the alias
is the base's gradient. Each call of the forward makes, per operator, a `HookRegistry` holding
the hook (the traced hook body, its captured values bound) and a real `RemovableHandle`
stored in the call's handle slot, as eager's ``Tensor.register_hook`` would (same handle ids,
same registration observers; removing the handle in user code disables the hook). The
backward fires a base's registries in registration order once its total gradient is formed
and before it is propagated to the base's producers (spec §9.3): each hook gets the gradient
as a tensor and may replace it (validated as eager validates, `check_replacement`). Hooks stay
Python calls; the code around them is generated.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from hookgrad._tensor import Tensor
from hookgrad.autograd._hook_points import check_replacement
from hookgrad.compile.trace import hops
from hookgrad.compile.core.graph import Node
from hookgrad.compile.trace.module_hooks import backward_hook_setup
from hookgrad.utils.hooks import HookRegistry

__all__ = ["is_hook_op", "hook_supported", "bases_of", "new_hooks", "fire", "skip"]

_make = Tensor._make


def is_hook_op(node: Node) -> bool:
    return node.op == "call_function" and node.target is hops.register_hook


def hook_supported(node: Node) -> bool:
    """A ``register_hook`` operator on a value computed in the graph (not a graph input)."""
    base = node.args[0]
    while isinstance(base, Node) and is_hook_op(base):
        base = base.args[0]
    # (not on a module backward-hook operator's output: its value is the operator's tuple,
    # which the generated backward and the rule walk cannot treat as the hooked tensor)
    return (isinstance(base, Node) and base.op == "call_function" and base.target is not backward_hook_setup
            and set(node.kwargs) <= {"handle_slot"})


def bases_of(nodes: list, index: dict) -> list[int]:
    """``bases[j]``: the value hook operator `j` aliases (itself for every other value)."""
    bases = list(range(len(nodes)))
    for j, node in enumerate(nodes):
        if is_hook_op(node):
            bases[j] = bases[index[id(node.args[0])]]
    return bases


def new_hooks(body: Any, slot: int, *free: Any) -> HookRegistry:
    """One call's registry for one ``register_hook`` operator (see the NOTE)."""
    body = body.forward  # the traced GraphModule's code, not `Module.__call__` (`hops`)
    if free:
        bound = tuple(_make(np.asarray(f)) for f in free)

        def hook(grad: Tensor) -> Any:
            return body(grad, *bound)
    else:
        hook = body
    registry = HookRegistry()
    hops.store_handle(slot, registry.add_plain(hook))
    return registry


def fire(registries: tuple, g: Any) -> Any:
    """Run the hooks of one base on its gradient array `g`; the (maybe replaced) array."""
    grad = _make(np.asarray(g))
    start = grad
    for registry in registries:
        for fn in list(registry.values()):
            new = fn(grad)
            if new is not None:
                grad = check_replacement(fn, grad, new)
    return g if grad is start else grad._data


def skip(registries: tuple, g: Any) -> Any:
    """`fire` for a validation run (NOTE [Validated variants]): hooks must fire only once."""
    return g
