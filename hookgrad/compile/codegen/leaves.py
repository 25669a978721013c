"""Leaf accumulation inside a compiled backward, at eager's point (NOTE [Leaves in the compiled backward]).

NOTE [Leaves in the compiled backward]
Under ``aot_eager``/``inductor`` a graph's backward is one node, ``CompiledFunctionBackward``,
standing for every eager node of the graph. Eager's engine runs a leaf's ``AccumulateGrad`` as
soon as its last gradient arrives (its priority is the highest, NOTE [Engine order]): right
after the graph node that is the leaf's last consumer in backward order, before the rest of the
graph. A parameter's post-accumulate hook, an input's tensor hook, or a ``.grad`` read by a
module backward hook therefore observe the leaf at that point. (PyTorch's ``torch.compile``
returns every leaf gradient at the end of its one node, so those hooks run after the whole
graph there; hookgrad keeps eager's order, contract §0.1.)

So the generated backward (and the rule walk) call ``leaf(k, g)`` right after the step that
completes input `k`'s gradient: it runs the input's accumulator then and there when the running
pass would run it next (`hookgrad.autograd._schedule.run_ready_now`: a leaf whose accumulator
waits for no other edge) and returns None, the gradient then being delivered; otherwise it
returns `g` and the engine routes it as usual. Leaves completed by one step are handed over in
the order eager's engine would run their accumulators (`ready_order`; ``F.linear``: the bias,
then the input, then the weight, whose gradient passes one more node, ``TBackward0``; a node's
edges are read off its traced derivative, `Derivative.edges`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from hookgrad._tensor import Tensor
from hookgrad.autograd._schedule import ready_order, run_ready_now
from hookgrad.compile.codegen.derivative import derivative
from hookgrad.compile.codegen.hooks import is_hook_op
from hookgrad.compile.core.graph import Node
from hookgrad.compile.trace.recorder import PrimCall, getitem

__all__ = ["leaf_points", "leaf_runner", "keep"]

_make = Tensor._make


def leaf_points(steps: list, index: dict, bases: list, inputs: list) -> dict:
    """``{step position: [input k, ...]}``: after which step of the reverse walk each input's
    gradient is complete (``-1``: before the first step, for an input no step reads), the
    inputs of one step in eager's accumulator order (see the NOTE)."""
    where = {p: k for k, p in enumerate(inputs)}
    last: dict[int, int] = {}  # input k -> the lowest step reading it (the last walked)
    order: dict[int, list[int]] = {}  # step -> inputs it reads, in edge order
    late: dict[int, set] = {}  # step -> inputs one node further (``F.linear``'s weight)
    for i, node in steps:
        if is_hook_op(node) or node.target is getitem:
            continue
        direct, further = _edges(node)
        args = [node.args[j] for j in direct + further]
        for j in further:
            k = where.get(bases[index[id(node.args[j])]])
            if k is not None:
                late.setdefault(i, set()).add(k)
        for a in args:
            k = where.get(bases[index[id(a)]])
            if k is None:
                continue
            if k not in last or i < last[k]:
                last[k] = i
            reads = order.setdefault(i, [])
            if k not in reads:
                reads.append(k)
    points: dict[int, list[int]] = {}
    for i, reads in order.items():
        now = [k for k in reads if last[k] == i and k not in late.get(i, ())]
        after = [k for k in reads if last[k] == i and k in late.get(i, ())]
        if now or after:
            points[i] = [now[j] for j in ready_order(len(now))] + after
    untouched = [k for k in range(len(inputs)) if k not in last]
    if untouched:
        points[-1] = untouched
    return points


def _edges(node: Node) -> tuple[list, list]:
    """The argument positions of `node` in its autograd node's edge order, and those one node
    further: a primitive's are its arguments in order; a function of several primitives
    (``F.linear``: ``addmm`` reads the bias, the input, then ``t`` of the weight) shows them in
    its traced derivative (NOTE [Traced derivatives])."""
    own = [j for j, a in enumerate(node.args) if isinstance(a, Node)]
    if type(node.target) is PrimCall or len(own) != len(node.args):
        return own, []
    metas = tuple((a.meta.get("shape"), getattr(a.meta.get("dtype"), "np", None))
                  for a in node.args)
    found = None if any(m is None for meta in metas for m in meta) else \
        derivative(node.target, metas)
    return found.edges() if found is not None else (own, [])


def keep(k: int, g: Any) -> Any:
    """The ``leaf`` of a run that must not accumulate (a validation run): keeps `g`."""
    return g


def leaf_runner(node: Any) -> Any:
    """``leaf(k, g) -> g or None`` for the backward of compiled-function node `node` (its
    edge `k` leads to input `k`)."""
    edges = node._next_edges
    meta = node.input_metadata()

    def leaf(k: int, g: Any) -> Any:
        if g is None:
            return None
        target = edges[k][0]
        m = meta[k] if k < len(meta) else None
        g = np.asarray(g)
        if m is None or g.shape != m[0] or g.dtype != m[1]:
            return g  # the engine conforms it (a cast or a reduction) on its way
        return None if run_ready_now(target, _make(g)) else g
    return leaf
