"""`SubgraphMatcher`: find every place a pattern graph occurs in a graph.

A match is found by walking backwards from the pattern's anchors (the values the pattern
returns, or its output node with ``match_output``) in both graphs at once: a tensor has one
producer but many consumers, so only the backward walk is deterministic. Several anchors are
matched one after another with backtracking, sharing one node map. Pattern placeholders are
wildcards (unless ``match_placeholder``); literals must be equal and of the same type (unless
``ignore_literals``). A match is kept only when it is self-contained (its inner nodes have no
users outside it), fusing it would not form a cycle, and (by default) it does not overlap an
earlier match.

Mirrors: ``torch.fx.passes.utils.matcher_utils``.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

from hookgrad._tensor import Tensor
from hookgrad.fx.graph import Graph
from hookgrad.fx.node import Node
from hookgrad.fx.passes.utils.fuser_utils import validate_partition

__all__ = ["InternalMatch", "SubgraphMatcher"]

_INPUT_OR_OUTPUT = ("placeholder", "output")


@dataclass
class InternalMatch:
    """One occurrence: pattern node -> graph node, plus the matched inputs and returned values.

    Mirrors: ``torch.fx.passes.utils.matcher_utils.InternalMatch``.
    """

    anchors: list[Node]
    nodes_map: dict[Node, Node] = field(default_factory=dict)
    placeholder_nodes: list[Node] = field(default_factory=list)
    returning_nodes: list[Node] = field(default_factory=list)
    name_node_map: dict[str, Node] = field(default_factory=dict)

    def __copy__(self) -> InternalMatch:
        return InternalMatch(anchors=self.anchors, nodes_map=self.nodes_map.copy(),
                             placeholder_nodes=self.placeholder_nodes.copy(),
                             returning_nodes=self.returning_nodes.copy())


def _attribute_at(node: Node) -> Any:
    value = node.graph.owning_module
    if value is None:
        raise AssertionError(f"{node.name}.graph.owning_module must not be None")
    for atom in node.target.split("."):
        value = getattr(value, atom)
    return value


class SubgraphMatcher:
    """Match a pattern `Graph` against graphs (see the module doc).

    Mirrors: ``torch.fx.passes.utils.matcher_utils.SubgraphMatcher``.
    """

    def __init__(self, pattern: Graph, match_output: bool = False,
                 match_placeholder: bool = False, remove_overlapping_matches: bool = True,
                 ignore_literals: bool = False) -> None:
        self.pattern = pattern
        self.match_output = match_output
        self.match_placeholder = match_placeholder
        self.remove_overlapping_matches = remove_overlapping_matches
        self.ignore_literals = ignore_literals
        if len(pattern.nodes) == 0:
            raise ValueError("SubgraphMatcher cannot be initialized with an empty pattern")
        for node in pattern.nodes:
            if node.op != "output" and not node.is_impure() and not node.users:
                raise AssertionError(
                    "SubgraphMatcher cannot be initialized with an pattern with dead code")
        self.pattern_placeholder_nodes = [n for n in pattern.nodes if n.op == "placeholder"]
        output_node = next(iter(reversed(pattern.nodes)))
        self.pattern_returning_nodes: list[Node] = output_node.all_input_nodes
        # a returned value that is also used inside the pattern is reached from another anchor
        self.pattern_anchors: list[Node] = (
            [output_node] if match_output
            else [n for n in output_node.all_input_nodes if len(n.users) == 1])

    # ------------------------------------------------------------------ node comparison
    def _match_attributes(self, pn: Node, gn: Node) -> bool:
        if not isinstance(pn.target, str) or not isinstance(gn.target, str):
            raise AssertionError("get_attr targets must be strings")
        pv, gv = _attribute_at(pn), _attribute_at(gn)
        if type(pv) is not type(gv):
            return False
        if isinstance(pv, Tensor):
            return True
        raise RuntimeError(f"Unsupported type {pv} when matching attributes")

    def _nodes_are_equal(self, pn: Node, gn: Node, node_name_match: str = "") -> bool:
        if not self.match_placeholder and pn.op == "placeholder":
            return True
        if node_name_match and node_name_match in gn.name:
            return True
        if pn.op != gn.op:
            return False
        if pn.op in _INPUT_OR_OUTPUT:
            return True
        if pn.op == "get_attr":
            return self._match_attributes(pn, gn)
        return pn.target == gn.target

    def _match_literals(self, pn: Any, gn: Any, match: InternalMatch) -> bool:
        if isinstance(pn, Node):
            # a wildcard placeholder may stand for a literal too, consistently
            if pn.op != "placeholder" or isinstance(gn, Node):
                return False
            if pn in match.nodes_map:
                return match.nodes_map[pn] == gn
            match.nodes_map[pn] = gn
            return True
        if isinstance(gn, Node):
            return False
        return type(gn) is type(pn) and gn == pn

    def _match_args(self, pargs: Any, gargs: Any, match: InternalMatch) -> bool:
        if len(pargs) != len(gargs):
            return False
        for a, b in zip(pargs, gargs):
            if isinstance(a, Node) and isinstance(b, Node):
                ok = self._match_nodes(a, b, match)
            elif isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
                ok = self._match_args(a, b, match)
            else:
                ok = self._match_literals(a, b, match) or self.ignore_literals
            if not ok:
                return False
        return True

    def _match_nodes(self, pn: Node, gn: Node, match: InternalMatch,
                     node_name_match: str = "") -> bool:
        if pn in match.nodes_map:
            return match.nodes_map[pn] == gn
        if gn in match.nodes_map.values():
            return False
        if not self._nodes_are_equal(pn, gn, node_name_match):
            return False
        match.nodes_map[pn] = gn
        if pn.op == "placeholder":
            return True
        if len(pn.args) != len(gn.args) or list(pn.kwargs) != list(gn.kwargs):
            return False
        return self._match_args([*pn.args, *pn.kwargs.values()],
                                [*gn.args, *gn.kwargs.values()], match)

    # ------------------------------------------------------------------ match filters
    def _is_contained(self, nodes_map: dict[Node, Node]) -> bool:
        inner = {gn: pn for pn, gn in nodes_map.items() if pn.op != "placeholder"}
        return all(pn in self.pattern_returning_nodes
                   or all(user in inner for user in gn.users)
                   for gn, pn in inner.items())

    @staticmethod
    def _remove_overlapping(matches: list[InternalMatch]) -> list[InternalMatch]:
        taken: set[Node] = set()
        kept: list[InternalMatch] = []
        for match in matches:
            compute = [gn for pn, gn in match.nodes_map.items()
                       if pn.op not in _INPUT_OR_OUTPUT]
            if any(gn in taken for gn in compute):
                continue
            kept.append(match)
            taken.update(compute)
        return kept

    def match(self, graph: Graph, node_name_match: str = "") -> list[InternalMatch]:
        """Every self-contained occurrence of the pattern in ``graph``, in graph order.

        Mirrors: ``torch.fx.passes.utils.matcher_utils.SubgraphMatcher.match``.
        """
        candidates: list[tuple[Node, list[Node]]] = []
        for anchor in self.pattern_anchors:
            nodes = [n for n in graph.nodes if self._nodes_are_equal(anchor, n, node_name_match)]
            if nodes:
                candidates.append((anchor, nodes))
        matches: list[InternalMatch] = []

        def extend(index: int, match: InternalMatch) -> None:
            if index == len(candidates):
                match.placeholder_nodes = [match.nodes_map[p]
                                           for p in self.pattern_placeholder_nodes]
                match.returning_nodes = [match.nodes_map[p]
                                         for p in self.pattern_returning_nodes]
                matches.append(match)
                return
            anchor, nodes = candidates[index]
            for node in nodes:
                attempt = copy.copy(match)
                if self._match_nodes(anchor, node, attempt, node_name_match):
                    extend(index + 1, attempt)

        if candidates:
            extend(0, InternalMatch(anchors=self.pattern_anchors))
        matches = [m for m in matches if self._is_contained(m.nodes_map)]
        matches = [m for m in matches
                   if validate_partition([gn for pn, gn in m.nodes_map.items()
                                          if pn.op not in _INPUT_OR_OUTPUT])]
        if self.remove_overlapping_matches:
            matches = self._remove_overlapping(matches)
        return matches
