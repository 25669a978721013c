"""`Node`: one operation of a `Graph`, with its use lists; `map_arg` / `map_aggregate`.

Mirrors ``torch.fx.node``. A node's ``args``/``kwargs`` are immutable: every change goes through
the setters so that ``users`` (who reads me) and ``_input_nodes`` (whom I read) stay in step.
"""

from __future__ import annotations

import builtins
import operator
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from hookgrad.fx._kinds import NODE_KINDS
from hookgrad.fx._names import qualified_name
from hookgrad.fx.immutable_collections import immutable_dict, immutable_list

if TYPE_CHECKING:
    from hookgrad.fx.graph import Graph

__all__ = ["Node", "map_arg", "map_aggregate", "Argument", "Target"]

Argument = Any  # a Node, a Python value, or a tuple/list/dict/slice of them
Target = Any  # str for placeholder/get_attr/call_method/call_module/output, else a callable

_NO_KWARGS = immutable_dict()

# call_function targets that have effects, so dead-code elimination must keep them
_IMPURE_FUNCTIONS: set[Any] = {operator.setitem, builtins.print}


def has_side_effect(fn: Any) -> Any:
    """Mark `fn` impure: dead-code elimination keeps its calls. Mirrors:
    ``torch.fx.node.has_side_effect``."""
    _IMPURE_FUNCTIONS.add(fn)
    return fn


def map_aggregate(a: Argument, fn: Callable[[Argument], Argument]) -> Argument:
    """Apply `fn` to every leaf of `a`, rebuilding tuples, lists, dicts and slices.

    Lists and dicts come back immutable (``immutable_list`` / ``immutable_dict``); named tuples
    keep their type.

    Example:
        >>> map_aggregate((1, [2, 3]), lambda v: v * 10)
        (10, [20, 30])

    Mirrors: ``torch.fx.node.map_aggregate``.
    """
    if isinstance(a, tuple):
        items = tuple(map_aggregate(e, fn) for e in a)
        return items if not hasattr(a, "_fields") else type(a)(*items)
    if isinstance(a, list):
        return immutable_list(map_aggregate(e, fn) for e in a)
    if isinstance(a, dict):
        return immutable_dict((k, map_aggregate(v, fn)) for k, v in a.items())
    if isinstance(a, slice):
        return slice(map_aggregate(a.start, fn), map_aggregate(a.stop, fn),
                     map_aggregate(a.step, fn))
    return fn(a)


def map_arg(a: Argument, fn: Callable[[Node], Argument]) -> Argument:
    """Apply `fn` to every `Node` inside `a`, leaving other values as they are.

    Mirrors: ``torch.fx.node.map_arg``.
    """
    if not callable(fn):
        raise AssertionError("torch.fx.map_arg(a, fn): fn must be a callable")
    return map_aggregate(a, lambda x: fn(x) if isinstance(x, Node) else x)


def _type_name(t: Any) -> str:
    """``"torch.Tensor "`` for a node annotated with a class, as torch prints it; else ``""``."""
    if not isinstance(t, type):
        return ""
    if t.__module__ == "builtins":
        return f"{t.__qualname__} "
    package = sys.modules["hookgrad"]
    if getattr(package, t.__name__, None) is t:
        return f"torch.{t.__name__} "
    return f"{t.__module__.replace('hookgrad.', 'torch.', 1)}.{t.__qualname__} "


def _pretty_target(target: Any) -> str:
    if isinstance(target, str):
        return target
    module, name = getattr(target, "__module__", None), getattr(target, "__name__", None)
    if name is not None and module in ("builtins", "_operator"):
        return f"{'operator' if module == '_operator' else module}.{name}"
    return qualified_name(target)


def _format_arg(arg: Any, max_list_len: float = float("inf")) -> str:
    """A node argument as `Graph.__str__` shows it: nodes as ``%name``, dict keys unquoted."""
    if isinstance(arg, tuple) and hasattr(arg, "_fields"):
        return repr(arg)
    if isinstance(arg, (tuple, list)):
        items = ", ".join(_format_arg(a) for i, a in enumerate(arg) if i < max_list_len)
        open_, close = ("(", ")") if isinstance(arg, tuple) else ("[", "]")
        if isinstance(arg, tuple) and len(arg) == 1:
            items += ","
        return f"{open_}{items}{close}"
    if isinstance(arg, dict):
        return "{" + ", ".join(f"{k}: {_format_arg(v)}" for k, v in arg.items()) + "}"
    if isinstance(arg, Node):
        return "%" + str(arg)
    return str(arg)


class Node:
    """One operation in a `Graph`: ``op`` (its kind), ``target``, ``args``, ``kwargs``.

    Nodes form a doubly linked list owned by the graph; ``users`` maps each node that reads
    this one to ``None`` (an ordered set), ``all_input_nodes`` lists the nodes this one reads.

    Example:
        >>> import hookgrad.fx as fx
        >>> g = fx.Graph()
        >>> x = g.placeholder("x")
        >>> y = g.call_method("relu", (x,))
        >>> _ = g.output(y)
        >>> list(x.users), y.all_input_nodes
        ([relu], [x])

    Mirrors: ``torch.fx.Node``.
    """

    def __init__(self, graph: Graph, name: str, op: str, target: Target, args: tuple,
                 kwargs: dict, return_type: Any = None) -> None:
        kind = NODE_KINDS.get(op)
        if kind is None:
            raise AssertionError(f"op must be one of {tuple(NODE_KINDS)}, got {op}")
        if kind.target_is_str and not isinstance(target, str):
            raise ValueError(f"Node [graph = {graph}, name = '{name}'] target {target} has "
                             f"type {type(target)} but a str is expected for {op}")
        if not kind.target_is_str and not callable(target):
            raise ValueError(f"Node [graph = {graph}, name = '{name}'] target {target} has "
                             f"type {type(target)} but a Callable is expected")
        self.graph = graph
        self.name = name
        self.op = op
        self.target = target
        self._input_nodes: dict[Node, None] = {}
        self.users: dict[Node, None] = {}
        self.type = return_type
        self._prev = self
        self._next = self
        self._erased = False
        self._args: tuple = ()
        self._kwargs: dict = immutable_dict()
        self.meta: dict[str, Any] = {}
        self._update_args_kwargs(args, kwargs)

    # ------------------------------------------------------------------ linked list
    @property
    def next(self) -> Node:
        """The node after this one (the graph's root sentinel at the end).

        Mirrors: ``torch.fx.Node.next``.
        """
        return self._next

    @property
    def prev(self) -> Node:
        """The node before this one. Mirrors: ``torch.fx.Node.prev``."""
        return self._prev

    def prepend(self, x: Node) -> None:
        """Move `x` (from wherever it is in this graph) to just before this node.

        Mirrors: ``torch.fx.Node.prepend``.
        """
        if self is x:
            return
        if self.graph is not x.graph:
            raise AssertionError("Attempting to move a Node into a different Graph")
        x._remove_from_list()
        p = self._prev
        p._next, x._prev = x, p
        x._next, self._prev = self, x

    def append(self, x: Node) -> None:
        """Move `x` to just after this node. Mirrors: ``torch.fx.Node.append``."""
        self._next.prepend(x)

    def _remove_from_list(self) -> None:
        # The node keeps its own links: a graph walk standing on it can still move on.
        p, n = self._prev, self._next
        p._next, n._prev = n, p

    # ------------------------------------------------------------------ arguments
    @property
    def args(self) -> tuple:
        """The positional arguments (immutable; assign a new tuple to change them).

        Mirrors: ``torch.fx.Node.args``.
        """
        return self._args

    @args.setter
    def args(self, a: tuple) -> None:
        self._update_args_kwargs(a, self._kwargs)

    @property
    def kwargs(self) -> dict:
        """The keyword arguments (immutable; assign a new dict). Mirrors: ``Node.kwargs``."""
        return self._kwargs

    @kwargs.setter
    def kwargs(self, k: dict) -> None:
        self._update_args_kwargs(self._args, k)

    def _update_args_kwargs(self, new_args: tuple, new_kwargs: dict) -> None:
        for old in self._input_nodes:
            old.users.pop(self, None)
        self._input_nodes = {}
        self._args = map_aggregate(tuple(new_args), self._note_input)
        # (most nodes have no keyword arguments: they share one immutable empty dict)
        self._kwargs = map_aggregate(dict(new_kwargs), self._note_input) if new_kwargs \
            else _NO_KWARGS

    def _note_input(self, a: Any) -> Any:
        if isinstance(a, Node):
            self._input_nodes.setdefault(a)
            a.users.setdefault(self)
        return a

    @property
    def all_input_nodes(self) -> list[Node]:
        """The distinct nodes this node reads, in argument order.

        Mirrors: ``torch.fx.Node.all_input_nodes``.
        """
        return list(self._input_nodes)

    def update_arg(self, idx: int, arg: Argument) -> None:
        """Replace positional argument `idx`. Mirrors: ``torch.fx.Node.update_arg``."""
        args = list(self.args)
        args[idx] = arg
        self.args = tuple(args)

    def update_kwarg(self, key: str, arg: Argument) -> None:
        """Set keyword argument `key`. Mirrors: ``torch.fx.Node.update_kwarg``."""
        self.kwargs = {**self.kwargs, key: arg}

    def replace_input_with(self, old_input: Node, new_input: Node) -> None:
        """Make this node read `new_input` wherever it read `old_input`.

        Mirrors: ``torch.fx.Node.replace_input_with``.
        """
        swap = lambda n: new_input if n is old_input else n  # noqa: E731
        self._update_args_kwargs(map_arg(self._args, swap), map_arg(self._kwargs, swap))

    def replace_all_uses_with(self, replace_with: Node,
                              delete_user_cb: Callable[[Node], bool] = lambda user: True, *,
                              propagate_meta: bool = False) -> list[Node]:
        """Make every user of this node (accepted by `delete_user_cb`) read `replace_with`.

        Returns:
            The users that were changed.

        Mirrors: ``torch.fx.Node.replace_all_uses_with``.
        """
        if propagate_meta:
            if replace_with.meta:
                raise AssertionError("Called node.replace_all_uses_with(replace_with, "
                                     "propagate_meta=True), but replace_with already has "
                                     ".meta keys")
            replace_with.meta.update(self.meta)
        changed = [u for u in list(self.users) if delete_user_cb(u)]
        for user in changed:
            user.replace_input_with(self, replace_with)
        return changed

    # ------------------------------------------------------------------ properties
    @property
    def stack_trace(self) -> str | None:
        """The user stack recorded at trace time, if any. Mirrors: ``Node.stack_trace``."""
        return self.meta.get("stack_trace")

    @stack_trace.setter
    def stack_trace(self, trace: str | None) -> None:
        self.meta["stack_trace"] = trace

    def is_impure(self, impure_random: bool = True) -> bool:
        """Whether dead-code elimination must keep this node although nobody reads it.

        Mirrors: ``torch.fx.Node.is_impure``.
        """
        if self.op in ("placeholder", "output"):
            return True
        if self.op == "call_function":
            return self.target in _IMPURE_FUNCTIONS
        if self.op == "call_module":
            root = self.graph.owning_module
            if root is None:
                return False
            mod = root.get_submodule(self.target)
            return bool(getattr(mod, "_is_impure", False))
        return False

    def _rename(self, candidate: str) -> None:
        """Take a fresh name close to `candidate` (the old one stays used, so later nodes of
        the same target count on: ``truediv_1`` after a ``truediv`` renamed ``b``).

        Mirrors: ``torch.fx.Node._rename``.
        """
        if candidate == self.name:
            return
        name = self.graph._graph_namespace.create_name(candidate, None)
        self.name = name
        self.graph._graph_namespace._rename_object(self, name)

    def format_node(self, placeholder_names: list[str] | None = None,
                    maybe_return_typename: list[str] | None = None) -> str | None:
        """One line describing this node, as `Graph.__str__` prints it.

        Mirrors: ``torch.fx.Node.format_node``.
        """
        head = f"%{self.name} : {_type_name(self.type)}[num_users={len(self.users)}] = {self.op}"
        if self.op == "placeholder":
            if placeholder_names:
                placeholder_names.append(self.target)
                return None
            default = f"(default={self.args[0]})" if self.args else ""
            return f"{head}[target={self.target}]{default}"
        if self.op == "get_attr":
            return f"{head}[target={_pretty_target(self.target)}]"
        if self.op == "output":
            return f"return {self.args[0]}"
        return (f"{head}[target={_pretty_target(self.target)}](args = {_format_arg(self.args)},"
                f" kwargs = {_format_arg(self.kwargs)})")

    def __repr__(self) -> str:
        return self.name

# PyTorch's ``__all__`` also lists these
__all__ += ["has_side_effect"]
