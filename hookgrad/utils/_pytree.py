"""Flatten nested containers to a list of leaves and a `TreeSpec`, and build them back.

Mirrors: ``torch.utils._pytree`` (the core that libraries such as Lightning import:
``SUPPORTED_NODES``, ``NodeDef``, ``register_pytree_node``, ``TreeSpec``/``LeafSpec``,
``tree_flatten``/``tree_unflatten``/``tree_map``...). Nodes are tuple, list, dict, every
namedtuple (under the one key ``namedtuple``, as PyTorch's ``_get_node_type`` reports),
OrderedDict, defaultdict, deque and whatever `register_pytree_node` adds; anything else,
``None`` included, is a leaf. Specs print, compare and hash as PyTorch's.

Example:
    >>> leaves, spec = tree_flatten({"a": [1, (2, 3)], "b": None})
    >>> leaves, tree_unflatten([str(x) for x in leaves], spec)
    ([1, 2, 3, None], {'a': ['1', ('2', '3')], 'b': 'None'})
"""

from __future__ import annotations

import warnings
from collections import OrderedDict, defaultdict, deque, namedtuple
from collections.abc import Callable, Iterable
from typing import Any, NamedTuple

__all__ = ["PyTree", "Context", "NodeDef", "SUPPORTED_NODES", "register_pytree_node",
           "TreeSpec", "LeafSpec", "tree_flatten", "tree_unflatten", "tree_leaves",
           "tree_structure", "tree_map", "tree_map_only", "tree_iter", "tree_is_leaf",
           "tree_all", "tree_any", "is_namedtuple", "is_namedtuple_class",
           "is_namedtuple_instance", "treespec_pprint", "MappingKey", "SequenceKey",
           "GetAttrKey"]

PyTree = Any
Context = Any
FlattenFunc = Callable[[PyTree], tuple[list, Context]]
UnflattenFunc = Callable[[Iterable, Context], PyTree]


class NodeDef(NamedTuple):
    """How one container type flattens. Mirrors: ``torch.utils._pytree.NodeDef``."""

    type: Any
    flatten_fn: FlattenFunc
    unflatten_fn: UnflattenFunc
    flatten_with_keys_fn: Any = None


SUPPORTED_NODES: dict[Any, NodeDef] = {}


def register_pytree_node(cls: Any, flatten_fn: FlattenFunc, unflatten_fn: UnflattenFunc, *,
                         serialized_type_name: str | None = None, to_dumpable_context: Any = None,
                         from_dumpable_context: Any = None, flatten_with_keys_fn: Any = None
                         ) -> None:
    """Make `cls` a node type. Mirrors: ``torch.utils._pytree.register_pytree_node``."""
    if cls in SUPPORTED_NODES:
        raise ValueError(f"{cls} is already registered as pytree node.")
    SUPPORTED_NODES[cls] = NodeDef(cls, flatten_fn, unflatten_fn, flatten_with_keys_fn)


def _register_pytree_node(cls: Any, flatten_fn: FlattenFunc, unflatten_fn: UnflattenFunc,
                          to_str_fn: Any = None, maybe_from_str_fn: Any = None, *,
                          serialized_type_name: str | None = None,
                          to_dumpable_context: Any = None, from_dumpable_context: Any = None,
                          flatten_with_keys_fn: Any = None) -> None:
    """The deprecated spelling of `register_pytree_node` (libraries written for PyTorch 2.0
    still call it). Mirrors: ``torch.utils._pytree._register_pytree_node``."""
    warnings.warn("`torch.utils._pytree._register_pytree_node` is deprecated. Please use "
                  "`torch.utils._pytree.register_pytree_node` instead.", FutureWarning,
                  stacklevel=2)
    register_pytree_node(cls, flatten_fn, unflatten_fn,
                         serialized_type_name=serialized_type_name,
                         to_dumpable_context=to_dumpable_context,
                         from_dumpable_context=from_dumpable_context,
                         flatten_with_keys_fn=flatten_with_keys_fn)


def is_namedtuple_class(cls: Any) -> bool:
    """A tuple subclass with ``_fields``. Mirrors: ``torch.utils._pytree.is_namedtuple_class``."""
    return (isinstance(cls, type) and issubclass(cls, tuple)
            and isinstance(getattr(cls, "_fields", None), tuple)
            and all(isinstance(f, str) for f in cls._fields))


def is_namedtuple_instance(obj: Any) -> bool:
    """Mirrors: ``torch.utils._pytree.is_namedtuple_instance``."""
    return is_namedtuple_class(type(obj))


def is_namedtuple(obj: Any) -> bool:
    """A namedtuple class or instance. Mirrors: ``torch.utils._pytree.is_namedtuple``."""
    return is_namedtuple_class(obj if isinstance(obj, type) else type(obj))


def _get_node_type(tree: Any) -> Any:
    node_type = type(tree)
    return namedtuple if is_namedtuple_class(node_type) else node_type


def _dict_flatten(d: dict) -> tuple[list, Context]:
    return list(d.values()), list(d.keys())


def _dict_unflatten(values: Iterable[Any], context: Context) -> dict:
    """Mirrors: ``torch.utils._pytree._dict_unflatten``."""
    return dict(zip(context, values))


class MappingKey(NamedTuple):
    """A dict key in a key path. Mirrors: ``torch.utils._pytree.MappingKey``."""

    key: Any

    def __str__(self) -> str:
        return f"[{self.key!r}]"

    def get(self, mapping: Any) -> Any:
        """The entry of `mapping` at this key."""
        return mapping[self.key]


class SequenceKey(NamedTuple):
    """A sequence index in a key path. Mirrors: ``torch.utils._pytree.SequenceKey``."""

    idx: int

    def __str__(self) -> str:
        return f"[{self.idx!r}]"

    def get(self, sequence: Any) -> Any:
        """The element of `sequence` at this index."""
        return sequence[self.idx]


class GetAttrKey(NamedTuple):
    """An attribute name in a key path. Mirrors: ``torch.utils._pytree.GetAttrKey``."""

    name: str

    def __str__(self) -> str:
        return f".{self.name}"

    def get(self, obj: Any) -> Any:
        """The attribute of `obj` of this name."""
        return getattr(obj, self.name)


def _dict_flatten_with_keys(d: dict) -> tuple[list, Context]:
    values, context = _dict_flatten(d)
    return [(MappingKey(k), v) for k, v in zip(context, values)], context


register_pytree_node(tuple, lambda t: (list(t), None), lambda v, c: tuple(v))
register_pytree_node(list, lambda t: (list(t), None), lambda v, c: list(v))
register_pytree_node(dict, _dict_flatten, _dict_unflatten)
register_pytree_node(namedtuple, lambda t: (list(t), type(t)), lambda v, c: c(*v))
register_pytree_node(OrderedDict, _dict_flatten, lambda v, c: OrderedDict(zip(c, v)))
register_pytree_node(defaultdict, lambda d: (list(d.values()), [d.default_factory, list(d)]),
                     lambda v, c: defaultdict(c[0], zip(c[1], v)))
register_pytree_node(deque, lambda d: (list(d), d.maxlen), lambda v, c: deque(v, maxlen=c))


def tree_is_leaf(tree: PyTree, is_leaf: Callable[[PyTree], bool] | None = None) -> bool:
    """Mirrors: ``torch.utils._pytree.tree_is_leaf``."""
    if is_leaf is not None and is_leaf(tree):
        return True
    return _get_node_type(tree) not in SUPPORTED_NODES


_is_leaf = tree_is_leaf


class TreeSpec:
    """The structure of a flattened tree: node type, context and child specs.

    Mirrors: ``torch.utils._pytree.TreeSpec``.
    """

    def __init__(self, type: Any, context: Context, children_specs: list[TreeSpec]) -> None:
        self.type, self.context, self.children_specs = type, context, list(children_specs)
        self.num_children = len(self.children_specs)
        self.num_leaves = sum(c.num_leaves for c in self.children_specs) if type is not None \
            else 1
        self.num_nodes = 1 + sum(c.num_nodes for c in self.children_specs)

    def is_leaf(self) -> bool:
        """Whether this spec is a single leaf."""
        return self.type is None

    def children(self) -> list[TreeSpec]:
        """The child specs."""
        return list(self.children_specs)

    def child(self, index: int) -> TreeSpec:
        """One child spec."""
        return self.children_specs[index]

    def flatten_up_to(self, tree: PyTree) -> list:
        """The subtrees of `tree` at this spec's leaves."""
        if self.is_leaf():
            return [tree]
        children, _ = SUPPORTED_NODES[_get_node_type(tree)].flatten_fn(tree)
        return [x for c, t in zip(self.children_specs, children) for x in c.flatten_up_to(t)]

    def unflatten(self, leaves: Iterable[Any]) -> PyTree:
        """The tree with this structure holding `leaves`."""
        leaves = list(leaves)
        if len(leaves) != self.num_leaves:
            raise ValueError(
                f"treespec.unflatten(leaves): `leaves` has length {len(leaves)} but the spec "
                f"refers to a pytree that holds {self.num_leaves} items ({self}).")
        return self._build(iter(leaves))

    def _build(self, it: Any) -> PyTree:
        if self.is_leaf():
            return next(it)
        values = [c._build(it) for c in self.children_specs]
        return SUPPORTED_NODES[self.type].unflatten_fn(values, self.context)

    def _key(self) -> tuple:
        ctx = self.context
        if isinstance(ctx, list):
            ctx = tuple(tuple(c) if isinstance(c, list) else c for c in ctx)
        return (self.type, ctx, tuple(c._key() for c in self.children_specs))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, TreeSpec) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self, indent: int = 0) -> str:
        if self.is_leaf():
            return "*"
        name = "namedtuple" if self.type is namedtuple else self.type.__name__
        head = f"TreeSpec({name}, {self.context}, ["
        pad = " " * (indent + 2)
        parts = [c.__repr__(indent + 2) for c in self.children_specs]
        return head + f",\n{pad}".join(parts) + "])"


class LeafSpec(TreeSpec):
    """The spec of a leaf. Mirrors: ``torch.utils._pytree.LeafSpec``."""

    def __init__(self) -> None:
        super().__init__(None, None, [])


_LEAF = LeafSpec()


def tree_flatten(tree: PyTree, is_leaf: Callable[[PyTree], bool] | None = None
                 ) -> tuple[list, TreeSpec]:
    """``(leaves, spec)``. Mirrors: ``torch.utils._pytree.tree_flatten``."""
    leaves: list = []
    return leaves, _flatten(tree, leaves, is_leaf)


def _flatten(tree: PyTree, leaves: list, is_leaf: Any) -> TreeSpec:
    if tree_is_leaf(tree, is_leaf):
        leaves.append(tree)
        return _LEAF
    node_type = _get_node_type(tree)
    children, context = SUPPORTED_NODES[node_type].flatten_fn(tree)
    return TreeSpec(node_type, context, [_flatten(c, leaves, is_leaf) for c in children])


def tree_unflatten(leaves: Iterable[Any], treespec: TreeSpec) -> PyTree:
    """The inverse of `tree_flatten`. Mirrors: ``torch.utils._pytree.tree_unflatten``."""
    if not isinstance(treespec, TreeSpec):
        raise TypeError(
            "Expected `treespec` to be an instance of PyTreeSpec but got item of type "
            f"{type(treespec)}.")
    return treespec.unflatten(leaves)


def tree_iter(tree: PyTree, is_leaf: Callable[[PyTree], bool] | None = None) -> Iterable[Any]:
    """The leaves, lazily. Mirrors: ``torch.utils._pytree.tree_iter``."""
    if tree_is_leaf(tree, is_leaf):
        yield tree
        return
    children, _ = SUPPORTED_NODES[_get_node_type(tree)].flatten_fn(tree)
    for child in children:
        yield from tree_iter(child, is_leaf)


def tree_leaves(tree: PyTree, is_leaf: Callable[[PyTree], bool] | None = None) -> list:
    """Mirrors: ``torch.utils._pytree.tree_leaves``."""
    return list(tree_iter(tree, is_leaf))


def tree_structure(tree: PyTree, is_leaf: Callable[[PyTree], bool] | None = None) -> TreeSpec:
    """Mirrors: ``torch.utils._pytree.tree_structure``."""
    return tree_flatten(tree, is_leaf)[1]


def tree_map(func: Callable[..., Any], tree: PyTree, *rests: PyTree,
             is_leaf: Callable[[PyTree], bool] | None = None) -> PyTree:
    """`func` over the leaves of `tree` (and the matching leaves of `rests`).

    Mirrors: ``torch.utils._pytree.tree_map``.
    """
    leaves, spec = tree_flatten(tree, is_leaf)
    others = [spec.flatten_up_to(r) for r in rests]
    return spec.unflatten(map(func, leaves, *others))


def tree_map_only(type_or_types: Any, func: Callable[[Any], Any], tree: PyTree,
                  is_leaf: Callable[[PyTree], bool] | None = None) -> PyTree:
    """`func` over the leaves of the given type(s); other leaves unchanged.

    Mirrors: ``torch.utils._pytree.tree_map_only``.
    """
    return tree_map(lambda x: func(x) if isinstance(x, type_or_types) else x, tree,
                    is_leaf=is_leaf)


def tree_all(pred: Callable[[Any], bool], tree: PyTree,
             is_leaf: Callable[[PyTree], bool] | None = None) -> bool:
    """Mirrors: ``torch.utils._pytree.tree_all``."""
    return all(map(pred, tree_iter(tree, is_leaf)))


def tree_any(pred: Callable[[Any], bool], tree: PyTree,
             is_leaf: Callable[[PyTree], bool] | None = None) -> bool:
    """Mirrors: ``torch.utils._pytree.tree_any``."""
    return any(map(pred, tree_iter(tree, is_leaf)))


def treespec_pprint(treespec: TreeSpec) -> str:
    """A spec written as the tree it describes, leaves as ``*``.

    Mirrors: ``torch.utils._pytree.treespec_pprint``.
    """
    return repr(treespec.unflatten([_Star()] * treespec.num_leaves))


class _Star:
    def __repr__(self) -> str:
        return "*"
