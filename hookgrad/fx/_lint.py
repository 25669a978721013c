"""`Graph.lint`: the invariants every consumer of a graph relies on."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from hookgrad.fx._kinds import NODE_KINDS
from hookgrad.fx.node import Node, map_arg

if TYPE_CHECKING:
    from hookgrad.fx.graph import Graph

__all__ = ["lint"]


def _check_arg(graph: Graph, seen: set[Node], arg: Node, node: Node) -> None:
    where = f" of Node '{node}' "
    if arg.graph is not graph:
        raise RuntimeError(f"Argument '{arg}'{where}does not belong to this Graph, but was "
                           "used as an argument! If you are copying nodes from another graph, "
                           f"make sure to use ``arg_transform`` on node_copy() to remap values\n"
                           f"{graph}")
    if arg not in seen:
        raise RuntimeError(f"Argument '{arg}'{where}was used before it has been defined! Please "
                           f"check that Nodes in the graph are topologically ordered\n{graph}")


def _check_target(graph: Graph, node: Node) -> None:
    root: Any = graph.owning_module
    if root is None or node.op not in ("get_attr", "call_module"):
        return
    obj, seen_path = root, []
    for atom in node.target.split("."):
        if not hasattr(obj, atom):
            raise RuntimeError(f"Node {node} target {node.target} references nonexistent "
                               f"attribute {atom} of {'.'.join(seen_path) or type(root).__name__}")
        obj = getattr(obj, atom)
        seen_path.append(atom)
    from hookgrad.nn import Module  # noqa: PLC0415 - only needed with an owning module

    if node.op == "call_module" and not isinstance(obj, Module):
        raise RuntimeError(f"Node {node} target {node.target} {atom} of "
                           f"{'.'.join(seen_path[:-1])} does not reference an nn.Module")


def lint(graph: Graph) -> None:
    """Raise RuntimeError on the first broken invariant of `graph`."""
    seen: set[Node] = set()
    names: set[str] = set()
    for node in graph.nodes:
        if node.op not in NODE_KINDS:
            raise RuntimeError(f"Node {node} had unknown opcode {node.op}!")
        if node.graph is not graph:
            raise RuntimeError(f"Node '{node}' does not belong to this Graph!")
        map_arg(node.args, lambda a, n=node: _check_arg(graph, seen, a, n))
        map_arg(node.kwargs, lambda a, n=node: _check_arg(graph, seen, a, n))
        for inp in node._input_nodes:
            if node not in inp.users:
                raise RuntimeError(f"Node '{node}' reads '{inp}' but is not among its users")
        if node.name in names:
            raise RuntimeError(f"Node redefined name {node.name}!")
        names.add(node.name)
        seen.add(node)
        _check_target(graph, node)
    for node in graph.nodes:
        for user in node.users:
            if user._erased or user.graph is not graph:
                raise RuntimeError(f"Node '{node}' has a user '{user}' outside the graph")
