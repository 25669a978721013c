"""Compile's graphs are `hookgrad.fx` graphs: the few helpers compile adds on top (spec §4).

A traced region is a ``hookgrad.fx.Graph`` of primitive-level nodes (one ``call_function`` per
primitive `bind` ran, plus hook operators and multi-output picks); `compile_module` wraps it in
a ``hookgrad.fx.GraphModule`` whose ``forward`` comes from the one fx emitter. There is no
second graph class: `Node`, `Graph` and `GraphModule` here *are* the fx classes, re-exported so
the stage packages keep one import path.

A compiled call never goes through ``Module.__call__``: backends take ``gm.forward``, the
generated function bound to the module (one Python call, no hook dispatch).
"""

from __future__ import annotations

from typing import Any

from hookgrad.fx import Graph, GraphModule, Node
from hookgrad.fx._kinds import NODE_KINDS

__all__ = ["Node", "Graph", "GraphModule", "placeholder", "compile_module", "op_count",
           "USER_CALLS", "FACTORY_CALLS", "PRIMITIVE_LEVEL"]

# Keys of ``gm.meta`` on a primitive-level graph module (read by `backends.to_fx`).
USER_CALLS = "hookgrad_user_calls"  # the user-level calls that made the nodes (`trace.user_calls`)
FACTORY_CALLS = "hookgrad_factory_calls"  # id of a baked constant -> (call, constant)
PRIMITIVE_LEVEL = "hookgrad_primitive_level"  # True on compile's own (primitive-level) graphs


def placeholder(graph: Graph, name: str) -> Node:
    """A graph input named after `name` (made unique), the name also being its parameter.

    The parameter of the generated ``forward`` is the placeholder's *target*; a trace may ask
    twice for one source name (a size and a tensor of one input), so the target follows the
    unique node name instead of the requested one.
    """
    node = graph.create_node("placeholder", name, name=name)  # (fx would snake_case `L_x_`)
    node.target = node.name
    return node


def compile_module(graph: Graph, attrs: dict[str, Any] | None = None,
                   meta: dict[str, Any] | None = None) -> GraphModule:
    """A ``hookgrad.fx.GraphModule`` running `graph`; `attrs` maps each ``get_attr`` target to
    its value (tensor constants become buffers, hook bodies child modules)."""
    gm = GraphModule(dict(attrs or {}), graph)
    gm.meta[PRIMITIVE_LEVEL] = True
    gm.meta.update(meta or {})
    return gm


def op_count(graph: Graph) -> int:
    """Nodes that do work (``call_*``): the `CompileCounter` convention of spec §5.2."""
    return sum(1 for n in graph.nodes if NODE_KINDS[n.op].calls)
