"""A small pytree: tuples, lists, dicts and namedtuples are nodes, anything else a leaf.

Mirrors the containers ``torch.utils._pytree`` flattens for ``torch.func`` (``None`` is a leaf
here; functorch treats it as an empty node, which only matters for ``in_dims`` structure).
"""

from __future__ import annotations

from typing import Any

__all__ = ["tree_flatten", "tree_unflatten", "TreeSpec", "broadcast_prefix", "tree_map"]


class TreeSpec:
    """The structure of a flattened tree."""

    __slots__ = ("kind", "ctx", "children")

    def __init__(self, kind: Any, ctx: Any, children: list) -> None:
        self.kind, self.ctx, self.children = kind, ctx, children

    @property
    def num_leaves(self) -> int:
        if self.kind is None:
            return 1
        return sum(c.num_leaves for c in self.children)

    def __repr__(self) -> str:
        if self.kind is None:
            return "*"
        inner = ", ".join(repr(c) for c in self.children)
        return f"TreeSpec({getattr(self.kind, '__name__', self.kind)}, {self.ctx}, [{inner}])"

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, TreeSpec) and self.kind is other.kind
                and self.ctx == other.ctx and self.children == other.children)

    __hash__ = None  # type: ignore[assignment]


_LEAF = TreeSpec(None, None, [])


def tree_flatten(tree: Any) -> tuple[list, TreeSpec]:
    """``(leaves, spec)``."""
    if not isinstance(tree, _NODES):  # a single leaf (a tensor): the transforms' common case
        return [tree], _LEAF
    leaves: list = []
    return leaves, _flatten(tree, leaves)


_NODES = (dict, tuple, list)


def _flatten(x: Any, leaves: list) -> TreeSpec:
    # (called once per node and leaf of every transform's inputs and outputs: type checks
    # ordered so a leaf costs one isinstance)
    if not isinstance(x, _NODES):
        leaves.append(x)
        return _LEAF
    kind = type(x)
    if isinstance(x, dict):
        keys = list(x)
        return TreeSpec(kind, keys, [_flatten(x[k], leaves) for k in keys])
    if kind is tuple or kind is list or (isinstance(x, tuple) and hasattr(kind, "_fields")):
        # (namedtuples are nodes)
        return TreeSpec(kind, None, [_flatten(e, leaves) for e in x])
    leaves.append(x)  # a list or tuple subclass that is not a namedtuple (torch.Size...)
    return _LEAF


def tree_unflatten(leaves: list, spec: TreeSpec) -> Any:
    """The inverse of `tree_flatten`."""
    if spec.kind is None:  # a single leaf
        return next(iter(leaves))
    it = iter(leaves)
    return _build(spec, it)


def _build(spec: TreeSpec, it: Any) -> Any:
    if spec.kind is None:
        return next(it)
    if spec.kind is tuple or spec.kind is list:
        return spec.kind([_build(c, it) for c in spec.children])
    vals = [_build(c, it) for c in spec.children]
    if issubclass(spec.kind, dict):
        return spec.kind(zip(spec.ctx, vals))
    if spec.kind not in (tuple, list) and hasattr(spec.kind, "_make"):  # namedtuple
        return spec.kind._make(vals)
    return spec.kind(vals)  # tuple, list and torch.return_types (built from one sequence)


def tree_map(fn: Any, tree: Any) -> Any:
    """`fn` applied to every leaf."""
    leaves, spec = tree_flatten(tree)
    return tree_unflatten([fn(x) for x in leaves], spec)


def broadcast_prefix(prefix: Any, spec: TreeSpec) -> list | None:
    """The leaves of `prefix` repeated over the subtrees of `spec` (None: not a prefix)."""
    out: list = []
    return out if _broadcast(prefix, spec, out) else None


def _broadcast(prefix: Any, spec: TreeSpec, out: list) -> bool:
    if spec.kind is None or not isinstance(prefix, (tuple, list, dict)):
        if isinstance(prefix, (tuple, list, dict)) and spec.kind is None:
            return False
        out.extend([prefix] * spec.num_leaves)
        return True
    if isinstance(prefix, dict) != issubclass(spec.kind, dict):
        return False
    if isinstance(prefix, dict):
        if set(prefix) != set(spec.ctx):
            return False
        return all(_broadcast(prefix[k], c, out) for k, c in zip(spec.ctx, spec.children))
    if len(prefix) != len(spec.children):
        return False
    return all(_broadcast(p, c, out) for p, c in zip(prefix, spec.children))
