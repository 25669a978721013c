"""Which graph nodes a backward pass will run, found from public graph API (``grad_fn`` and
``next_functions``), the same on hookgrad and PyTorch.

A pass with ``inputs=`` (or ``autograd.grad``) runs only the nodes that lie on a path from the
roots to one of the inputs; the others are "excluded by inputs=".
"""

from __future__ import annotations

from typing import Any

__all__ = ["Reach", "walk"]


class Reach:
    """The graph of one pass: ``nodes`` (id -> node), ``leaf_nodes`` (id(tensor) -> its
    AccumulateGrad), ``needed`` (ids of nodes that run when inputs prune the pass, else None)
    and ``targets`` (ids of the nodes the inputs stop at)."""

    def __init__(self, nodes: dict, leaf_nodes: dict, needed: set | None, targets: set) -> None:
        self.nodes = nodes
        self.leaf_nodes = leaf_nodes
        self.needed = needed
        self.targets = targets

    def node_of(self, tensor: Any) -> Any:
        fn = getattr(tensor, "grad_fn", None)
        return fn if fn is not None else self.leaf_nodes.get(id(tensor))

    def status(self, node: Any) -> str:
        """``reached``, ``excluded`` (pruned by inputs=) or ``not_reached``."""
        if node is None or id(node) not in self.nodes:
            return "not_reached"
        if self.needed is not None and id(node) not in self.needed:
            return "excluded"
        return "reached"


def _as_list(x: Any) -> list:
    if x is None:
        return []
    if isinstance(x, (tuple, list)):
        return list(x)
    if isinstance(x, dict):
        return list(x.values())
    return [x]


def walk(roots: Any, inputs: Any = None) -> Reach:
    """The nodes reachable from `roots` (tensors); with `inputs`, those needed to reach them."""
    nodes: dict = {}
    leaf_nodes: dict = {}
    parents: dict = {}  # id(child) -> ids of nodes with an edge to it
    stack = [r.grad_fn for r in _as_list(roots) if getattr(r, "grad_fn", None) is not None]
    while stack:  # iterative: graphs can be deep
        node = stack.pop()
        if id(node) in nodes:
            continue
        nodes[id(node)] = node
        var = getattr(node, "variable", None)
        if var is not None:
            leaf_nodes[id(var)] = node
        for nxt, _slot in getattr(node, "next_functions", ()):
            if nxt is not None:
                parents.setdefault(id(nxt), set()).add(id(node))
                stack.append(nxt)
    if inputs is None:
        return Reach(nodes, leaf_nodes, None, set())
    targets = set()
    for t in _as_list(inputs):
        node = getattr(t, "node", None)  # a GradientEdge
        if node is None:
            node = t.grad_fn if getattr(t, "grad_fn", None) is not None else \
                leaf_nodes.get(id(t))
        if node is not None:
            targets.add(id(node))
    needed = set(targets)
    frontier = list(targets)
    while frontier:
        for p in parents.get(frontier.pop(), ()):
            if p not in needed:
                needed.add(p)
                frontier.append(p)
    return Reach(nodes, leaf_nodes, needed, targets)
