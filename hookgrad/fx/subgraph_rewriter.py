"""`replace_pattern`: find every match of a pattern graph and splice in a replacement.

A pattern is a function (or graph) whose placeholders match any value and whose other nodes
must match node for node (same kind, same target, arguments matched recursively); the value it
returns is the anchor. Internal nodes of a match may not be used outside it, and matches do not
overlap. Each match is replaced, in graph order, by a copy of the replacement graph.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

from hookgrad.fx._symbolic_trace import symbolic_trace
from hookgrad.fx.graph import Graph
from hookgrad.fx.graph_module import GraphModule
from hookgrad.fx.node import Node
from hookgrad.nn import Module

__all__ = ["Match", "replace_pattern"]


class Match(NamedTuple):
    """One replaced occurrence: the graph node that matched the pattern's returned node, and
    the map from pattern nodes to graph nodes (placeholders to the values they matched).

    Mirrors: ``torch.fx.subgraph_rewriter.Match``.
    """

    anchor: Node
    nodes_map: dict[Node, Node]


def _graph_of(obj: Callable[..., Any] | Graph | GraphModule) -> Graph:
    if isinstance(obj, GraphModule):
        return obj.graph
    if isinstance(obj, Graph):
        return obj
    return symbolic_trace(obj).graph


class _Matcher:
    """Matches one pattern graph against graph nodes, anchored at the pattern's output."""

    def __init__(self, pattern: Graph) -> None:
        out = pattern.output_node()
        if not isinstance(out.args[0], Node):
            raise NotImplementedError("replace_pattern supports patterns returning one value")
        self.anchor = out.args[0]
        self.placeholders = [n for n in pattern.nodes if n.op == "placeholder"]

    def match_at(self, gn: Node) -> dict[Node, Any] | None:
        mapping: dict[Node, Any] = {}
        if not self._match(self.anchor, gn, mapping):
            return None
        inner = {v for k, v in mapping.items() if k.op != "placeholder"}
        for pn, g in mapping.items():
            if pn.op == "placeholder" or pn is self.anchor:
                continue
            if any(user not in inner for user in g.users):
                return None  # an intermediate result escapes the match
        return mapping

    def _match(self, pn: Any, gn: Any, mapping: dict[Node, Any]) -> bool:
        if isinstance(pn, Node):
            if pn in mapping:
                return mapping[pn] is gn if isinstance(gn, Node) else mapping[pn] == gn
            if pn.op == "placeholder":
                mapping[pn] = gn
                return True
            if not isinstance(gn, Node) or gn.op != pn.op or gn.target != pn.target:
                return False
            if gn in {v for k, v in mapping.items() if k.op != "placeholder"}:
                return False
            if len(pn.args) != len(gn.args) or set(pn.kwargs) != set(gn.kwargs):
                return False
            mapping[pn] = gn
            ok = all(self._match(p, g, mapping) for p, g in zip(pn.args, gn.args, strict=True))
            ok = ok and all(self._match(pn.kwargs[k], gn.kwargs[k], mapping) for k in pn.kwargs)
            if not ok:
                del mapping[pn]
            return ok
        if isinstance(pn, (tuple, list)):
            return (isinstance(gn, (tuple, list)) and len(pn) == len(gn)
                    and all(self._match(p, g, mapping) for p, g in zip(pn, gn, strict=True)))
        if isinstance(pn, dict):
            return (isinstance(gn, dict) and set(pn) == set(gn)
                    and all(self._match(pn[k], gn[k], mapping) for k in pn))
        return type(pn) is type(gn) and pn == gn


def _copy_attributes(gm: GraphModule, replacement: Module, graph: Graph) -> None:
    for node in graph.nodes:
        if node.op in ("get_attr", "call_module") and not hasattr(gm, node.target):
            obj = replacement.get_submodule(node.target) if node.op == "call_module" else \
                getattr(replacement, node.target)
            if isinstance(obj, Module):
                gm.add_submodule(node.target, obj)
            else:
                setattr(gm, node.target, obj)


def replace_pattern(gm: GraphModule, pattern: Callable[..., Any] | Graph | GraphModule,
                    replacement: Callable[..., Any] | Graph | GraphModule) -> list[Match]:
    """Replace every non-overlapping match of `pattern` in ``gm.graph`` with `replacement`.

    Args:
        gm: the module to rewrite (recompiled afterwards).
        pattern: a function or graph; its placeholders match any value.
        replacement: a function or graph with as many placeholders as `pattern`.

    Returns:
        One `Match` per replaced occurrence, in graph order.

    Example:
        >>> import hookgrad as torch
        >>> gm = torch.fx.symbolic_trace(lambda x: torch.relu(x) + 1)
        >>> ms = replace_pattern(gm, lambda a: torch.relu(a), lambda a: torch.sigmoid(a))
        >>> len(ms), "sigmoid" in gm.code
        (1, True)

    Mirrors: ``torch.fx.subgraph_rewriter.replace_pattern``.
    """
    pattern_graph = _graph_of(pattern)
    replacement_graph = _graph_of(replacement)
    matcher = _Matcher(pattern_graph)
    taken: set[Node] = set()
    found: list[dict[Node, Any]] = []
    for gn in gm.graph.nodes:
        mapping = matcher.match_at(gn)
        if mapping is None:
            continue
        inner = {v for k, v in mapping.items() if k.op != "placeholder"}
        if inner & taken:
            continue
        taken |= inner
        found.append(mapping)
    rep_placeholders = [n for n in replacement_graph.nodes if n.op == "placeholder"]
    if len(rep_placeholders) != len(matcher.placeholders):
        raise AssertionError(f"Placeholder count mismatch: {len(matcher.placeholders)} vs "
                             f"{len(rep_placeholders)}")
    results = []
    changed: dict[Node, Node] = {}  # anchors replaced so far -> their replacements
    for mapping in found:
        anchor = mapping[matcher.anchor]
        for pn in matcher.placeholders:  # a value may be the anchor of an earlier match
            value = mapping[pn]
            if isinstance(value, Node) and value in changed:
                mapping[pn] = changed[value]
        val_map = {rn: mapping[pn] for rn, pn in zip(rep_placeholders, matcher.placeholders,
                                                      strict=True)}
        users = [n for n in gm.graph.nodes if n in anchor.users]
        insert_point = users[0] if users else anchor.next
        with gm.graph.inserting_before(insert_point):
            new_out = gm.graph.graph_copy(replacement_graph, val_map)
        anchor.replace_all_uses_with(new_out)
        changed[anchor] = new_out
        for pn in reversed(pattern_graph.nodes):
            if pn.op not in ("placeholder", "output"):
                gm.graph.erase_node(mapping[pn])
        results.append(Match(anchor=matcher.anchor, nodes_map=mapping))
    gm.recompile()
    if isinstance(replacement, Module):
        _copy_attributes(gm, replacement, replacement_graph)
    return results
