"""Multi-output primitives in a joint program (NOTE [Multi-output primitives]).

NOTE [Multi-output primitives]
A primitive with a tuple result (``native_layer_norm``: output, mean, rstd; ``split``: its
chunks) is one graph node whose value is the tuple, picked by ``getitem`` nodes. In a joint
program the forward computes the tuple with the primitive's impl and each pick indexes it. In
the backward the picks' gradients are the node's output gradients: the node's step (where the
engine's schedule runs the eager node, `schedule.backward_order` maps a pick to its node)
calls the node's registered VJP rules once with all of them, None where an output got none,
as eager's ``PrimitiveNode.apply`` does (`multi_vjp`). A pick of an output the primitive
declares non-differentiable, and the result of a primitive without rules (``eq``), carry no
gradient (`carries_grad`), as eager gives them ``requires_grad=False``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from hookgrad._tensor import Tensor
from hookgrad.autograd._nodes import _PLANS, plan_of
from hookgrad.compile.codegen.nnkernels import fast_vjp
from hookgrad.compile.core.graph import Node
from hookgrad.compile.trace.recorder import PrimCall, getitem

__all__ = ["multi_output", "carries_grad", "multi_vjp"]

_make = Tensor._make


def multi_output(node: Node) -> bool:
    """A primitive call with a tuple result, picked by ``getitem`` nodes."""
    return type(node.target) is PrimCall and node.target.prim.num_outputs != 1


def carries_grad(node: Node) -> bool:
    """Whether a gradient can flow into `node`'s value (see the NOTE)."""
    target = node.target
    if type(target) is PrimCall:
        return bool(target.prim.vjp)
    if target is getitem and isinstance(node.args[0], Node) and multi_output(node.args[0]):
        return node.args[1] not in node.args[0].target.prim.nondifferentiable_outputs
    return True


def multi_vjp(node: Node, shapes: list, wanted: list) -> Callable[..., tuple]:
    """``f(grads, results, *inputs) -> input grads`` (arrays) of primitive node `node`: its
    registered rules on the output gradients `grads` (arrays or None), as eager's
    ``PrimitiveNode.apply`` runs them. A single-output node takes ``(grad,)`` and its result
    (`backward.generic_vjp`). The rules are called through their plan's callers (tensor in,
    tensor out: rules without an ``ops`` argument compute on tensors), with no graph recorded
    (grad mode is off in a backward that builds no graph)."""
    call: PrimCall = node.target
    prim = call.prim
    single = prim.num_outputs == 1
    plan = _PLANS.get(prim) or plan_of(prim)
    mask = sum(1 << k for k, pos in enumerate(prim.diff_inputs) if wanted[pos])
    saves = plan.saves_for(prim, mask)
    callers = [(pos, caller) for pos, caller in zip(prim.diff_inputs, plan.array_callers)
               if wanted[pos]]
    params = call.params
    n = len(node.args)

    def saved_value(src: int, results: Any, values: tuple) -> Any:
        if src >= 0:
            return _make(np.asarray(values[src]))
        if single:  # "result"
            return _make(np.asarray(results))
        if src == -2:
            return tuple(_make(np.asarray(r)) for r in results)
        return _make(np.asarray(results[0 if src == -1 else -10 - src]))  # eager's `_save`

    fast = fast_vjp(prim, params, wanted)  # NOTE [Primitive kernels] in nnkernels.py

    def vjp(grads: tuple, results: Any, *values: Any) -> tuple:
        if all(g is None for g in grads):  # eager's apply returns before any rule runs
            return (None,) * n
        if fast is not None:
            done = fast(grads, results, *values)
            if done is not None:
                return done
        saved = {name: saved_value(src, results, values) for name, src in saves}
        meta = tuple((shape, np.asarray(v).dtype) for shape, v in zip(shapes, values))
        gs = tuple(None if g is None else _make(np.asarray(g)) for g in grads)
        grad = gs[0] if single else None
        out: list[Any] = [None] * n
        for pos, caller in callers:
            res = caller(grad, gs, saved, params, meta)
            out[pos] = None if res is None else res._data
        return tuple(out)
    return vjp
