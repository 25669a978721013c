"""The one table of node kinds (architecture.md §11 "one graph").

Every consumer of a graph (the emitter, `Graph.lint`, the `Interpreter`, compile's backends)
dispatches on ``node.op``; this table is the only place the six kinds and the shape of their
``target`` are written down, so a consumer that misses a kind fails at import, not at run time.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["NodeKind", "NODE_KINDS", "check_covers"]


@dataclass(frozen=True, slots=True)
class NodeKind:
    """One value of ``Node.op``.

    Attributes:
        op: the kind's name (``node.op``).
        target_is_str: the target is a name or dotted path (else a callable).
        calls: the node runs code (``call_*``); the others only move values.
    """

    op: str
    target_is_str: bool
    calls: bool


NODE_KINDS: dict[str, NodeKind] = {
    kind.op: kind
    for kind in (
        NodeKind("placeholder", True, False),  # target: the argument name ("*args" for varargs)
        NodeKind("get_attr", True, False),  # target: dotted path of a parameter/buffer/attr
        NodeKind("call_function", False, True),  # target: the public callable itself
        NodeKind("call_method", True, True),  # target: method name, called on args[0]
        NodeKind("call_module", True, True),  # target: dotted path of the submodule
        NodeKind("output", True, False),  # target: "output"; args[0] is the returned value
    )
}


def check_covers(table: dict, where: str) -> None:
    """Fail at import if a per-kind dispatch `table` does not name exactly the known kinds."""
    if set(table) != set(NODE_KINDS):
        raise AssertionError(f"{where} handles {sorted(table)}, expected {sorted(NODE_KINDS)}")
