"""Module full backward (pre-)hooks inside a joint program (NOTE [Module hooks in the
generated backward]).

NOTE [Module hooks in the generated backward]
A ``backward_hook_setup`` operator (compile/module_hooks.py) stands for eager's
``BackwardHookFunctionBackward`` identity node of one module call, input or output side. In a
joint program its forward makes the call's `BackwardHook` (one per module call, shared by both
sides, with the module's and the global hooks registered *now*) and records what eager's
``setup_input_hook``/``setup_output_hook`` record (argument count, tensor positions, or None
when no tensor requires grad: then eager makes no node and no hook fires on that side). Its
value is its tensors themselves (a tuple for the input side, picked by ``getitem`` nodes). The
operator is a value of its own in the backward, as the identity node is in eager: when its
gradients are complete (some may be None), `run_node` materialises the missing ones as zeros
(custom Functions do), calls the side's node hook exactly as the engine calls a node
post-hook (the replacement tuple validated by `check_tuple`) and hands the result to the
tensors it wraps. A None in that result stops that gradient, as in eager: the generated code
treats every gradient downstream of a module hook as possibly None (`backward.py`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from hookgrad._tensor import Tensor
from hookgrad.autograd._hook_points import check_tuple
from hookgrad.compile.codegen.hooks import skip
from hookgrad.compile.core.graph import Node
from hookgrad.compile.trace.module_hooks import backward_hook_setup, new_backward_hook
from hookgrad.compile.core.state import current_run

__all__ = ["is_setup", "setup_supported", "make_setup", "run_node"]

_make = Tensor._make


def is_setup(node: Node) -> bool:
    return node.op == "call_function" and node.target is backward_hook_setup


def setup_supported(node: Node) -> bool:
    """A setup operator whose wrapped arguments are all graph tensors."""
    return len(node.args) > 3 and all(isinstance(a, Node) for a in node.args[3:])


def make_setup(slot: int, kind: str, requires: tuple) -> Any:
    """This call's `BackwardHook` for the module in `slot`, side `kind` recorded on it."""
    run = current_run()
    bw = run.bwhooks.get(slot)
    if bw is None:
        bw = run.bwhooks[slot] = new_backward_hook(run.objects[slot])
    index = list(range(len(requires))) if any(requires) else None
    if kind == "input":
        bw.n_inputs, bw.input_tensors_index = len(requires), index
    else:
        bw.n_outputs, bw.output_tensors_index = len(requires), index
    return (bw, kind, requires)


def run_node(state: Any, grads: tuple, values: tuple, fire: Any) -> tuple:
    """The identity node's backward with its hook: gradient arrays (or None) for the wrapped
    tensors, from the gradients of its outputs. `fire` is `skip` in validation runs."""
    bw, kind, requires = state
    if bw is None or not any(requires) or all(g is None for g in grads):
        return tuple(grads)
    outs = tuple(None if g is None else _make(np.asarray(g)) for g in grads)
    ins = tuple(_make(np.zeros(np.shape(v), np.asarray(v).dtype)) if g is None else g
                for g, v in zip(outs, values))
    if fire is skip:
        return tuple(None if t is None else t._data for t in ins)
    hook = bw._input_hook() if kind == "input" else bw._output_hook()
    new = hook(ins, outs)
    if new is not None:
        ins = tuple(check_tuple(hook, list(ins), new))
    return tuple(None if t is None else t._data for t in ins)
