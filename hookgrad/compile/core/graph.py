"""The graph IR of compiled regions: `Node`, `Graph`, `GraphModule` (spec §4).

A minimal FX-like IR. A `GraphModule` turns its graph into Python source (``.code``) and runs
that source: the generated ``forward`` is straight-line code calling each node's target, so a
compiled call costs one Python call per op and no tracing machinery.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["Node", "Graph", "GraphModule", "format_arg"]


class Node:
    """One operation of a `Graph`.

    Mirrors: ``torch.fx.Node``.
    """

    __slots__ = ("op", "name", "target", "args", "kwargs", "meta")

    def __init__(self, op: str, name: str, target: Any, args: tuple, kwargs: dict) -> None:
        self.op = op  # placeholder | get_attr | call_function | output
        self.name = name
        self.target = target
        self.args = args
        self.kwargs = kwargs
        self.meta: dict[str, Any] = {}

    def __repr__(self) -> str:
        return self.name


def _target_name(target: Any) -> str:
    return getattr(target, "__name__", None) or getattr(target, "name", None) or "op"


class Graph:
    """An ordered list of `Node`s with unique names.

    Mirrors: ``torch.fx.Graph``.
    """

    def __init__(self) -> None:
        self._nodes: list[Node] = []
        self._names: dict[str, int] = {}
        # the user-level calls that made the nodes (`trace.user_calls`, read by `to_fx`)
        self.user_calls: list[Any] = []
        self.factory_calls: dict[int, Any] = {}  # id of a baked constant -> (call, constant)

    @property
    def nodes(self) -> list[Node]:
        return self._nodes

    def _unique(self, hint: str) -> str:
        hint = "".join(c if c.isalnum() or c == "_" else "_" for c in hint) or "v"
        if hint[0].isdigit():
            hint = "_" + hint
        n = self._names.get(hint)
        self._names[hint] = 1 if n is None else n + 1
        return hint if n is None else f"{hint}_{n}"

    def create_node(self, op: str, target: Any, args: tuple = (), kwargs: dict | None = None,
                    name: str | None = None) -> Node:
        """Append a node named after `name` (or its target) and return it."""
        node = Node(op, self._unique(name or _target_name(target)), target, args, kwargs or {})
        self._nodes.append(node)
        return node

    def placeholder(self, name: str) -> Node:
        return self.create_node("placeholder", name, name=name)

    def call_function(self, target: Callable[..., Any], args: tuple, name: str | None = None,
                      kwargs: dict | None = None) -> Node:
        return self.create_node("call_function", target, args, kwargs, name)

    def get_attr(self, attr: str) -> Node:
        return self.create_node("get_attr", attr, name=attr)

    def output(self, values: tuple) -> Node:
        return self.create_node("output", "output", (values,), name="output")

    def op_count(self) -> int:
        """Nodes that do work (``call_*``): the `CompileCounter` convention of spec §5.2."""
        return sum(1 for n in self._nodes if "call" in n.op)

    def python_code(self) -> tuple[str, dict[str, Any]]:
        """The ``forward`` source and the namespace holding the node targets."""
        ns: dict[str, Any] = {}
        params = [n.name for n in self._nodes if n.op == "placeholder"]
        lines = [f"def forward(self, {', '.join(params)}):" if params else "def forward(self):"]
        for node in self._nodes:
            if node.op == "get_attr":
                lines.append(f"    {node.name} = self.{node.target}")
            elif node.op == "call_function":
                fname = f"_{_target_name(node.target)}_{len(ns)}"
                fname = "".join(c if c.isalnum() or c == "_" else "_" for c in fname)
                ns[fname] = node.target
                args = ", ".join(format_arg(a) for a in node.args)
                kw = "".join(f", {k} = {format_arg(v)}" for k, v in node.kwargs.items())
                if kw and not args:
                    kw = kw[2:]
                lines.append(f"    {node.name} = {fname}({args}{kw})")
            elif node.op == "output":
                lines.append(f"    return {format_arg(node.args[0])}")
        if self._nodes and self._nodes[-1].op != "output":
            lines.append("    return None")
        return "\n".join(lines) + "\n", ns

    def __str__(self) -> str:
        rows = [f"{n.op:14} {n.name:20} {_target_name(n.target) if n.op != 'placeholder' else ''}"
                f" {n.args if n.op == 'call_function' else ''}" for n in self._nodes]
        return "\n".join(rows)


def format_arg(value: Any) -> str:
    """A node argument as generated source: a node by its name, containers recursively."""
    if isinstance(value, Node):
        return value.name
    if isinstance(value, tuple):
        inner = ", ".join(format_arg(v) for v in value)
        return f"({inner},)" if len(value) == 1 else f"({inner})"
    if isinstance(value, list):
        return "[" + ", ".join(format_arg(v) for v in value) + "]"
    return repr(value)


class GraphModule:
    """A callable whose ``forward`` is Python source generated from a `Graph`.

    Sub-graphs (hook bodies) and tensor constants are attributes fetched by ``get_attr`` nodes.

    Mirrors: ``torch.fx.GraphModule``.
    """

    def __init__(self, graph: Graph, attrs: dict[str, Any] | None = None) -> None:
        self.graph = graph
        for name, value in (attrs or {}).items():
            setattr(self, name, value)
        self.recompile()

    def recompile(self) -> None:
        """Regenerate ``.code`` and ``forward`` from the graph."""
        src, ns = self.graph.python_code()
        self.code = src
        exec(compile(src, f"<hookgrad graph {id(self):x}>", "exec"), ns)  # noqa: S102
        self._fn = ns["forward"]

    def forward(self, *args: Any) -> Any:
        return self._fn(self, *args)

    __call__ = forward

    def print_readable(self) -> str:
        """The generated source, with nested hook bodies after it (hook nodes are marked)."""
        parts = [self.code]
        for name, value in vars(self).items():
            if isinstance(value, GraphModule):
                parts.append(f"# hook body {name}\n" + value.print_readable())
        return "\n".join(parts)
