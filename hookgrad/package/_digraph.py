"""The exporter's dependency graph: ordered nodes with attributes, edges ``u -> v`` = u needs v."""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator
from typing import Any


class DiGraph:
    """A tiny directed graph whose node order is first-appearance order (hooks follow it).

    Mirrors: ``torch.package._digraph.DiGraph`` (a networkx-like subset).
    """

    def __init__(self) -> None:
        self._node: dict[str, dict[str, Any]] = {}
        self._succ: dict[str, dict[str, bool]] = {}
        self._pred: dict[str, dict[str, bool]] = {}
        self._node_order: dict[str, int] = {}

    def add_node(self, n: str, **attrs: Any) -> None:
        """Add `n` (or update its attributes if it exists)."""
        if n in self._node:
            self._node[n].update(attrs)
            return
        self._node[n] = attrs
        self._succ[n] = {}
        self._pred[n] = {}
        self._node_order[n] = len(self._node_order)

    def add_edge(self, u: str, v: str) -> None:
        """Add ``u -> v``, creating either node if needed."""
        self.add_node(u)
        self.add_node(v)
        self._succ[u][v] = True
        self._pred[v][u] = True

    def successors(self, n: str) -> Iterator[str]:
        """Nodes `n` needs."""
        try:
            return iter(self._succ[n])
        except KeyError as e:
            raise ValueError(f"The node {n} is not in the digraph.") from e

    def predecessors(self, n: str) -> Iterator[str]:
        """Nodes that need `n`."""
        try:
            return iter(self._pred[n])
        except KeyError as e:
            raise ValueError(f"The node {n} is not in the digraph.") from e

    @property
    def edges(self) -> Iterator[tuple[str, str]]:
        """All edges in node order."""
        for n, succ in self._succ.items():
            for s in succ:
                yield n, s

    @property
    def nodes(self) -> dict[str, dict[str, Any]]:
        """Node name -> attribute dict, in first-appearance order."""
        return self._node

    def __iter__(self) -> Iterator[str]:
        return iter(self._node)

    def __contains__(self, n: object) -> bool:
        try:
            return n in self._node
        except TypeError:
            return False

    def _reachable(self, start: str, step: Any) -> set[str]:
        seen = {start}
        work = deque([start])
        while work:
            for n in step(work.popleft()):
                if n not in seen:
                    seen.add(n)
                    work.append(n)
        return seen

    def forward_transitive_closure(self, src: str) -> set[str]:
        """Nodes reachable from `src` (including it)."""
        return self._reachable(src, self.successors)

    def backward_transitive_closure(self, src: str) -> set[str]:
        """Nodes from which `src` is reachable (including it)."""
        return self._reachable(src, self.predecessors)

    def all_paths(self, src: str, dst: str) -> str:
        """Graphviz text of the sub-graph made of every path from `src` to `dst`."""
        result = DiGraph()
        forward = self.forward_transitive_closure(src)
        if dst in forward:
            work = deque([dst])
            seen = {dst}
            while work:
                cur = work.popleft()
                for n in self.predecessors(cur):
                    if n in forward:
                        result.add_edge(n, cur)
                        if n not in seen:
                            seen.add(n)
                            work.append(n)
        return result.to_dot()

    def first_path(self, dst: str) -> list[str]:
        """The path through the earliest-added predecessors that brought `dst` into the graph."""
        path = []
        while dst:
            path.append(dst)
            preds = self._pred[dst]
            dst = min(preds, key=self._node_order.__getitem__) if preds else ""
        return list(reversed(path))

    def to_dot(self) -> str:
        """Graphviz ``digraph`` text of the whole graph."""
        edges = "\n".join(f'"{f}" -> "{t}";' for f, t in self.edges)
        return f"digraph G {{\nrankdir = LR;\nnode [shape=box];\n{edges}\n}}\n"
