"""The order of a compiled backward: the eager engine's own schedule (NOTE [One backward
schedule] in hookgrad/autograd/_schedule.py).

A joint program's backward (the generated code and the rule walk) stands for the eager nodes
of its graph and must run their steps, and hand each input's gradient over (NOTE [Leaves in
the compiled backward] in leaves.py), in the order eager's engine would. Rather than restate
that order, `backward_order` builds one stand-in node per graph node (``_seq``: its creation
position; ``_next_edges``: its arguments, in its autograd node's edge order), one accumulator
stand-in per input (``AccumulateGrad``'s priority) and a root feeding the outputs that have a
gradient, and asks the engine's `schedule` for its order. A function of several primitives
(``F.linear``) gets one more stand-in for the node its later edges pass (``t`` of the weight),
read off its traced derivative (`Derivative.edges`, NOTE [Traced derivatives]).
"""

from __future__ import annotations

from typing import Any

from hookgrad.autograd._nodes import ACCUMULATE_GRAD_SEQ
from hookgrad.autograd._schedule import schedule
from hookgrad.compile.codegen.derivative import derivative
from hookgrad.compile.codegen.hooks import is_hook_op
from hookgrad.compile.core.graph import Node
from hookgrad.compile.trace.recorder import PrimCall, getitem

__all__ = ["backward_order"]


class _Point:
    """Stands for one eager autograd node (what `schedule` reads: ``_seq``, ``_next_edges``)."""

    __slots__ = ("_seq", "_next_edges", "step", "leaf")

    def __init__(self, seq: float, step: int | None = None, leaf: int | None = None) -> None:
        self._seq, self._next_edges = seq, ()
        self.step, self.leaf = step, leaf


def backward_order(prog: Any, present: tuple) -> list[tuple[str, int]]:
    """``("step", position)`` and ``("leaf", input k)`` entries in the order eager's engine
    would run the nodes they stand for, from the outputs whose gradient is `present`."""
    points: dict[int, _Point] = {}
    for i, node in prog.steps:
        if not (is_hook_op(node) or node.target is getitem):
            points[i] = _Point(i, step=i)
    accs = {j: _Point(ACCUMULATE_GRAD_SEQ, leaf=k) for k, j in enumerate(prog.inputs)}

    def edge(a: Node) -> tuple | None:
        j = prog.bases[prog.index[id(a)]]
        if prog.nodes[j].target is getitem:  # an item of a module hook operator: the operator
            j = prog.index[id(prog.nodes[j].args[0])]
        target = points.get(j) or accs.get(j)
        return None if target is None else (target, 0)

    for i, point in points.items():
        node = prog.nodes[i]
        direct, further = _edges(node)
        edges = [edge(node.args[k]) for k in direct]
        if further:  # the node those edges pass, created just before this one
            inner = _Point(i - 0.5)
            inner._next_edges = tuple(e for e in (edge(node.args[k]) for k in further) if e)
            edges.append((inner, 0))
        point._next_edges = tuple(e for e in edges if e is not None)
    root = _Point(float("inf"))
    root._next_edges = tuple(e for e in (edge(prog.nodes[j]) for j, here in
                                         zip(prog.outputs, present) if here) if e is not None)
    order, _ = schedule(root)  # type: ignore[arg-type]
    return [("leaf", p.leaf) if p.leaf is not None else ("step", p.step)
            for p in order[1:] if p.leaf is not None or p.step is not None]


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
