"""Whether a set of nodes can be fused into one without creating a cycle.

Mirrors: ``torch.fx.passes.utils.fuser_utils`` (``validate_partition``).
"""

from __future__ import annotations

from collections.abc import Iterable

from hookgrad.fx.node import Node

__all__ = ["validate_partition"]


def validate_partition(partition: Iterable[Node]) -> bool:
    """True when no path leaves ``partition`` and comes back into it.

    Such a path would make the fused node depend on itself. The walk starts at the partition's
    users outside it and follows users forward.

    Mirrors: ``torch.fx.passes.utils.fuser_utils.validate_partition``.
    """
    inside = set(partition)
    frontier = [user for node in inside for user in node.users if user not in inside]
    seen: set[Node] = set()
    while frontier:
        node = frontier.pop()
        if node in seen:
            continue
        seen.add(node)
        for user in node.users:
            if user in inside:
                return False
            frontier.append(user)
    return True
