"""The reference backward of a joint program: each primitive's registered VJP rules, in the
engine's order (`schedule.backward_order`).

It is what a generated backward is checked against on its first run (NOTE [Validated
variants] in joint.py) and what runs when a variant fails that check. Hook operators are
aliases of their base, whose hooks fire on its total gradient (NOTE [Hooks in the generated
backward]), exactly as in the generated code.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from hookgrad._config import STATE, set_recorders
from hookgrad._tensor import Tensor
from hookgrad.autograd._api import grad as autograd_grad
from hookgrad.autograd._nodes import _PLANS, plan_of
from hookgrad.autograd.grad_mode import enable_grad
from hookgrad.compile.codegen.hooks import is_hook_op
from hookgrad.compile.codegen.items import multi_output, multi_vjp
from hookgrad.compile.codegen.modhooks import is_setup, run_node
from hookgrad.compile.codegen.schedule import backward_order
from hookgrad.compile.core.graph import Node
from hookgrad.compile.trace.recorder import PrimCall, getitem

__all__ = ["walk", "engine_vjp"]

_make = Tensor._make


def engine_vjp(target: Any, values: Any, grad: Any, wanted: list) -> list:
    """The gradients (arrays, None where not `wanted`) of a node calling `target`, a function
    of several primitives, at `values`: the function runs on leaves and the engine
    differentiates it, so its primitives' registered rules compute them. The thread's
    recorders and saved-tensor hooks are set aside: this is the compiled node's backward, not
    user code."""
    leaves = [None if v is None else _make(np.asarray(v)) for v in values]  # (no bias)
    for t, want in zip(leaves, wanted):
        if want and t is not None:
            t.requires_grad_()
    stack, hooks = STATE.stack, STATE.saved_hooks_stack
    set_recorders(())
    STATE.saved_hooks_stack = []
    try:
        with enable_grad():
            out = target(*leaves)
        wants = [t for t, want in zip(leaves, wanted) if want]
        found = iter(autograd_grad(out, wants, _make(np.asarray(grad)), allow_unused=True)
                     if wants else ())
    finally:
        STATE.saved_hooks_stack = hooks
        set_recorders(stack)
    out_grads = [next(found) if want else None for want in wanted]
    return [None if r is None else r._data for r in out_grads]


def walk(prog: Any, env: tuple, grads: tuple, live: set, fire: Any, leaf: Any) -> dict:
    """``{value position: gradient array}`` for the live values reached from `grads`.

    `env` holds every value (hook operators: their registries); `fire(registries, g)` runs
    hooks; `leaf(k, [g])` hands over input `k`'s complete gradient (NOTE [Leaves in the compiled
    backward]).
    """
    bases = prog.bases
    acc: dict[int, Any] = {}
    for i, g in zip(prog.outputs, grads):
        if g is not None:
            i = bases[i]
            acc[i] = acc[i] + g if i in acc else g
    for kind, i in backward_order(prog, tuple(g is not None for g in grads)):
        if kind == "step":
            _step(prog, env, acc, live, i, prog.nodes[i], fire)
        else:
            _leaf(prog, acc, i, leaf)
    return acc


def _leaf(prog: Any, acc: dict, k: int, leaf: Any) -> None:
    j = prog.inputs[k]
    if j in acc:
        g = leaf(k, [acc.pop(j)])  # (NOTE [Fresh gradients] in leaves.py)
        if g is not None:
            acc[j] = g


def _step(prog: Any, env: tuple, acc: dict, live: set, i: int, node: Node, fire: Any) -> None:
    bases = prog.bases
    if is_setup(node) and i in live:
        _setup(prog, env, acc, live, i, node, fire)
        return
    if multi_output(node) and i in live:
        _multi(prog, env, acc, live, i, node, fire)
        return
    if is_hook_op(node) or node.target is getitem or i not in live or i not in acc:
        return
    g = acc[i]
    if prog.hooks_of.get(i):
        g = acc[i] = fire(tuple(env[h] for h in prog.hooks_of[i]), g)
    args = [bases[prog.index[id(a)]] if isinstance(a, Node) else None for a in node.args]
    vals = [prog.vals[prog.index[id(a)]] if isinstance(a, Node) else None for a in node.args]
    for j, gj in _vjp(node, env, i, args, vals, g, live):
        if j in live and gj is not None:
            acc[j] = acc[j] + gj if j in acc else gj


def _setup(prog: Any, env: tuple, acc: dict, live: set, i: int, node: Node, fire: Any) -> None:
    """A module hook operator (NOTE [Module hooks in the generated backward])."""
    items = prog.items_of.get(i)
    tensors = node.args[3:]
    grads = (acc.get(i),) if items is None else tuple(
        acc.get(items[k]) if k in items else None for k in range(len(tensors)))
    positions = [prog.bases[prog.index[id(a)]] for a in tensors]
    values = tuple(env[prog.vals[prog.index[id(a)]]] for a in tensors)
    for j, r in zip(positions, run_node(env[i], grads, values, fire)):
        if r is not None and j in live:
            acc[j] = acc[j] + r if j in acc else r


def _multi(prog: Any, env: tuple, acc: dict, live: set, i: int, node: Node, fire: Any) -> None:
    """A multi-output primitive (NOTE [Multi-output primitives] in items.py)."""
    items = prog.items_of.get(i, {})
    picked = [items.get(k) for k in range(len(env[i]))]
    for j in picked:
        if j is not None and acc.get(j) is not None and prog.hooks_of.get(j):
            acc[j] = fire(tuple(env[h] for h in prog.hooks_of[j]), acc[j])
    grads = tuple(acc.get(j) if j is not None and j in live else None for j in picked)
    args = [prog.bases[prog.index[id(a)]] if isinstance(a, Node) else None for a in node.args]
    values = [env[prog.vals[prog.index[id(a)]]] if isinstance(a, Node) else a
              for a in node.args]
    vjp = multi_vjp(node, [np.shape(v) for v in values], [a in live for a in args])
    for j, gj in zip(args, vjp(grads, env[i], *values)):
        if j in live and gj is not None:
            acc[j] = acc[j] + gj if j in acc else gj


def _vjp(node: Node, env: tuple, i: int, args: list, vals: list, g: Any, live: set) -> list:
    """``(target position, gradient)`` pairs; `args` are the gradient targets, `vals` where
    the argument values are."""
    call = node.target
    if type(call) is not PrimCall:  # a function of several primitives (``F.linear``)
        values = [env[a] if a is not None else v for a, v in zip(vals, node.args)]
        grads = engine_vjp(call, values, g, [a in live for a in args])
        return [(a, r) for a, r in zip(args, grads) if a in live]
    prim = call.prim
    plan = _PLANS.get(prim) or plan_of(prim)
    values = [_make(np.asarray(env[a])) for a in vals]
    saved: dict[str, Any] = {}
    for name, src in plan.saves_for(prim, (1 << len(prim.diff_inputs)) - 1):
        saved[name] = _make(np.asarray(env[i])) if src == -1 else values[src]
    meta = tuple((np.shape(env[a]), np.asarray(env[a]).dtype) for a in vals)
    grad = _make(np.asarray(g))
    out = []
    for k, caller in enumerate(plan.callers):
        if args[prim.diff_inputs[k]] not in live:
            continue
        res = caller(grad, (grad,), saved, call.params, meta)
        out.append((args[prim.diff_inputs[k]], None if res is None else res._data))
    return out
