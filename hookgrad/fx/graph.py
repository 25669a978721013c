"""`Graph`: an ordered, doubly linked list of `Node`s with unique names.

Mirrors ``torch.fx.graph``. New nodes go to the current insert point (the end, unless inside
``inserting_before``/``inserting_after``); the one emitter (`hookgrad.fx._codegen`) turns a graph
into Python source.
"""

from __future__ import annotations

import contextlib
import copy
import importlib
import inspect
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from hookgrad.fx._codegen import PythonCode, python_code
from hookgrad.fx._kinds import NODE_KINDS
from hookgrad.fx._names import Namespace, public_functions, snake_case
from hookgrad.fx.immutable_collections import immutable_dict
from hookgrad.fx.node import Argument, Node, Target, map_aggregate, map_arg

if TYPE_CHECKING:
    from hookgrad.nn import Module

__all__ = ["Graph", "PythonCode"]


class _NodeList:
    """A live view of a graph's nodes, in order (or reversed)."""

    def __init__(self, graph: Graph, reverse: bool = False) -> None:
        self._graph, self._reverse = graph, reverse

    def __len__(self) -> int:
        return self._graph._len

    def __iter__(self) -> Iterator[Node]:
        root = self._graph._root
        step = "_prev" if self._reverse else "_next"
        cur = getattr(root, step)
        while cur is not root:
            if not cur._erased:
                yield cur
            # An erased node keeps its links, so a walk continues past a node erased meanwhile;
            # a node inserted right after `cur` during the walk is visited, as in torch.
            cur = getattr(cur, step)

    def __reversed__(self) -> Iterator[Node]:
        return iter(_NodeList(self._graph, not self._reverse))

    def __repr__(self) -> str:
        return repr(list(self))


class _NodeRef:
    """A node reference inside a pickled graph record."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    @classmethod
    def of(cls, node: Node) -> _NodeRef:
        return cls(node.name)

    def __reduce__(self) -> tuple:
        return (_NodeRef, (self.name,))


class _PublicRef:
    """A public function inside a pickled graph record, by its dotted path."""

    __slots__ = ("path",)

    def __init__(self, path: str) -> None:
        self.path = path

    def resolve(self) -> Any:
        module, name = self.path.rsplit(".", 1)
        return getattr(importlib.import_module(module), name)

    def __reduce__(self) -> tuple:
        return (_PublicRef, (self.path,))


def _graph_from_records(records: list, tracer_cls: type | None) -> Graph:
    """Rebuild a pickled `Graph`."""
    g = Graph(tracer_cls=tracer_cls)
    by_name: dict[str, Node] = {}
    def resolve(a: Any) -> Any:
        return by_name[a.name] if isinstance(a, _NodeRef) else a

    for op, target, args, kwargs, name, type_expr, meta in records:
        if isinstance(target, _PublicRef):
            target = target.resolve()
        node = g.create_node(op, target, map_aggregate(args, resolve),
                             map_aggregate(kwargs, resolve), name, type_expr)
        node.meta = meta
        by_name[name] = node
    return g


def _make_root(graph: Graph) -> Node:
    root = object.__new__(Node)
    root.graph, root.name, root.op, root.target = graph, "", "root", ""
    root._prev = root._next = root
    root._erased, root._args, root._kwargs = False, (), immutable_dict()
    root.users, root._input_nodes, root.meta, root.type = {}, {}, {}, None
    return root


class Graph:
    """The nodes of one traced program, in execution order.

    Example:
        >>> import operator
        >>> g = Graph()
        >>> x = g.placeholder("x")
        >>> y = g.call_function(operator.add, (x, 1))
        >>> _ = g.output(y)
        >>> print(g.python_code("self").src.strip())
        def forward(self, x):
            add = x + 1;  x = None
            return add

    Mirrors: ``torch.fx.Graph``.
    """

    def __init__(self, owning_module: Module | None = None, tracer_cls: type | None = None,
                 tracer_extras: dict | None = None) -> None:
        self._root = _make_root(self)
        self._len = 0
        self._graph_namespace = Namespace()
        self._owning_module = owning_module
        self._tracer_cls = tracer_cls
        self._tracer_extras = tracer_extras
        self._insert: Callable[[Node], None] = self._root.prepend

    @property
    def owning_module(self) -> Module | None:
        """The `GraphModule` this graph belongs to, if any. Mirrors: ``Graph.owning_module``."""
        return self._owning_module

    @owning_module.setter
    def owning_module(self, mod: Module | None) -> None:
        self._owning_module = mod

    @property
    def nodes(self) -> _NodeList:
        """A live, ordered view of the nodes. Mirrors: ``torch.fx.Graph.nodes``."""
        return _NodeList(self)

    # ------------------------------------------------------------------ node creation
    def create_node(self, op: str, target: Target, args: tuple | None = None,
                    kwargs: dict | None = None, name: str | None = None,
                    type_expr: Any = None) -> Node:
        """Create a node at the insert point, named after `name` or its target.

        Mirrors: ``torch.fx.Graph.create_node``.
        """
        if op not in NODE_KINDS:
            raise AssertionError(f"op must be one of {tuple(NODE_KINDS)}, got {op}")
        args = () if args is None else args
        kwargs = {} if kwargs is None else kwargs
        if not isinstance(args, tuple) or not isinstance(kwargs, dict):
            raise AssertionError("args must be a tuple and kwargs a dict")
        candidate = name if name is not None else self._target_to_str(target)
        node_name = self._graph_namespace.create_name(candidate, None)
        node = Node(self, node_name, op, target, args, kwargs, type_expr)
        self._graph_namespace.associate_name_with_obj(node_name, node)
        self._insert(node)
        self._len += 1
        return node

    @staticmethod
    def _target_to_str(target: Target) -> str:
        if callable(target):
            op = getattr(target, "__name__", None) or type(target).__name__
        else:
            op = str(target)
        if op.startswith("__") and op.endswith("__") and len(op) > 4:
            op = op[2:-2]
        return snake_case(op)

    def placeholder(self, name: str, type_expr: Any = None,
                    default_value: Any = inspect.Signature.empty) -> Node:
        """An input of the graph (``default_value`` becomes the argument's default).

        Mirrors: ``torch.fx.Graph.placeholder``.
        """
        args = () if default_value is inspect.Signature.empty else (default_value,)
        return self.create_node("placeholder", name, args=args, type_expr=type_expr)

    def get_attr(self, qualified_name: str, type_expr: Any = None) -> Node:
        """Fetch ``root.<qualified_name>``. Mirrors: ``torch.fx.Graph.get_attr``."""
        return self.create_node("get_attr", qualified_name, type_expr=type_expr)

    def call_module(self, module_name: str, args: tuple | None = None,
                    kwargs: dict | None = None, type_expr: Any = None) -> Node:
        """Call the submodule at `module_name`. Mirrors: ``torch.fx.Graph.call_module``."""
        return self.create_node("call_module", module_name, args, kwargs, type_expr=type_expr)

    def call_method(self, method_name: str, args: tuple | None = None,
                    kwargs: dict | None = None, type_expr: Any = None) -> Node:
        """Call ``args[0].<method_name>(*args[1:])``. Mirrors: ``Graph.call_method``."""
        return self.create_node("call_method", method_name, args, kwargs, type_expr=type_expr)

    def call_function(self, the_function: Callable[..., Any], args: tuple | None = None,
                      kwargs: dict | None = None, type_expr: Any = None,
                      name: str | None = None) -> Node:
        """Call `the_function`. Mirrors: ``torch.fx.Graph.call_function``."""
        return self.create_node("call_function", the_function, args, kwargs, name, type_expr)

    def output(self, result: Argument, type_expr: Any = None) -> Node:
        """Return `result` from the graph. Mirrors: ``torch.fx.Graph.output``."""
        return self.create_node("output", "output", (result,), type_expr=type_expr)

    def output_node(self) -> Node:
        """The graph's output node (the last node). Mirrors: ``torch.fx.Graph.output_node``."""
        node = self._root._prev
        if node.op != "output":
            raise AssertionError(f"Last node in graph must be an output node, got {node.op}")
        return node

    def find_nodes(self, *, op: str, target: Any = None, sort: bool = True) -> list[Node]:
        """The nodes of kind `op` (and `target`), in graph order. Mirrors: ``find_nodes``."""
        return [n for n in self.nodes if n.op == op and (target is None or n.target == target)]

    # ------------------------------------------------------------------ editing
    @contextlib.contextmanager
    def _inserting(self, insert: Callable[[Node], None]) -> Iterator[None]:
        saved, self._insert = self._insert, insert
        try:
            yield
        finally:
            self._insert = saved

    def inserting_before(self, n: Node | None = None) -> contextlib.AbstractContextManager:
        """Within the ``with`` block, new nodes go before `n` (default: the graph's start).

        Mirrors: ``torch.fx.Graph.inserting_before``.
        """
        if n is None:
            return self.inserting_after(self._root)
        if n.graph is not self:
            raise AssertionError("Node to insert before is not in graph.")
        return self._inserting(n.prepend)

    def inserting_after(self, n: Node | None = None) -> contextlib.AbstractContextManager:
        """Within the ``with`` block, new nodes go after `n` (default: the graph's end).

        Mirrors: ``torch.fx.Graph.inserting_after``.
        """
        if n is None:
            return self.inserting_before(self._root)
        if n.graph is not self:
            raise AssertionError("Node to insert after is not in graph.")
        return self._inserting(n.append)

    def erase_node(self, to_erase: Node) -> None:
        """Remove a node that nobody uses any more.

        Raises:
            RuntimeError: if it still has users or belongs to another graph.

        Mirrors: ``torch.fx.Graph.erase_node``.
        """
        if len(to_erase.users) > 0:
            raise RuntimeError(f"Tried to erase Node {to_erase} but it still had "
                               f"{len(to_erase.users)} users in the graph: {to_erase.users}!")
        if to_erase.graph is not self:
            raise RuntimeError(f"Attempting to remove {to_erase} from wrong graph!")
        if to_erase._erased:
            return
        to_erase._remove_from_list()
        to_erase._erased = True
        self._len -= 1
        to_erase._update_args_kwargs((), {})

    def node_copy(self, node: Node, arg_transform: Callable[[Node], Argument] = lambda x: x
                  ) -> Node:
        """Copy `node` (from any graph) into this one, mapping its inputs by `arg_transform`.

        Mirrors: ``torch.fx.Graph.node_copy``.
        """
        args = map_arg(node.args, arg_transform)
        kwargs = map_arg(node.kwargs, arg_transform)
        out = self.create_node(node.op, node.target, args, kwargs, node.name, node.type)
        out.meta = copy.copy(node.meta)
        return out

    def graph_copy(self, g: Graph, val_map: dict[Node, Node],
                   return_output_node: bool = False) -> Any:
        """Copy every node of `g` into this graph; returns the copied output value.

        `val_map` maps `g`'s nodes to this graph's and is filled in as nodes are copied.

        Mirrors: ``torch.fx.Graph.graph_copy``.
        """
        for node in g.nodes:
            if node in val_map:
                continue
            if node.op == "output":
                rv = map_arg(node.args[0], lambda n: val_map[n])
                return (rv, node) if return_output_node else rv
            val_map[node] = self.node_copy(node, lambda n: val_map[n])
        return None

    def __deepcopy__(self, memo: dict) -> Graph:
        g = Graph(tracer_cls=self._tracer_cls)
        out = g.graph_copy(self, val_map={}, return_output_node=True)
        if out is not None:
            value, old_output = out
            new_output = g.output(value, type_expr=old_output.type)
            new_output.meta = copy.copy(old_output.meta)
        return g

    def __reduce__(self) -> tuple:
        # Nodes are written as flat records (a pickled linked list would recurse once per node).
        # Public functions are written by their public path: several are generated (their
        # ``__qualname__`` does not resolve), and a reader of the pickle knows them by that name.
        public = public_functions()
        records = [(n.op, _PublicRef(public[id(n.target)]) if id(n.target) in public else n.target,
                    map_arg(n.args, _NodeRef.of), map_arg(n.kwargs, _NodeRef.of),
                    n.name, n.type, n.meta) for n in self.nodes]
        return (_graph_from_records, (records, self._tracer_cls))

    def eliminate_dead_code(self, is_impure_node: Callable[[Node], bool] | None = None
                            ) -> bool:
        """Erase nodes with no users that have no side effects; True if any went.

        Mirrors: ``torch.fx.Graph.eliminate_dead_code``.
        """
        changed = False
        for node in reversed(self.nodes):
            impure = is_impure_node(node) if is_impure_node else node.is_impure()
            if not impure and not node.users:
                self.erase_node(node)
                changed = True
        return changed

    # ------------------------------------------------------------------ output
    def python_code(self, root_module: str, *, verbose: bool = False,
                    include_stride: bool = False, include_device: bool = False,
                    colored: bool = False) -> PythonCode:
        """The source of ``forward`` for this graph (the one emitter).

        Mirrors: ``torch.fx.Graph.python_code``.
        """
        return python_code(self, root_module, verbose)

    def lint(self) -> None:
        """Check the graph's invariants (see `hookgrad.fx._lint`).

        Raises:
            RuntimeError: on the first broken invariant.

        Mirrors: ``torch.fx.Graph.lint``.
        """
        from hookgrad.fx._lint import lint  # noqa: PLC0415 - keeps this module small

        lint(self)

    def print_tabular(self) -> None:
        """Print the nodes as a table (needs the ``tabulate`` package, as torch does).

        Mirrors: ``torch.fx.Graph.print_tabular``.
        """
        try:
            from tabulate import tabulate  # noqa: PLC0415 - optional dependency
        except ImportError:
            print("`print_tabular` relies on the library `tabulate`, which could not be found "
                  "on this machine. Run `pip install tabulate` to install the library.")
            raise
        rows = [[n.op, n.name, n.target, n.args, n.kwargs] for n in self.nodes]
        print(tabulate(rows, headers=["opcode", "name", "target", "args", "kwargs"]))

    def __str__(self) -> str:
        lines = ["graph():"]
        for node in self.nodes:
            text = node.format_node()
            if text:
                lines.append("    " + text)
        return "\n".join(lines)

    def __repr__(self) -> str:
        return f"<hookgrad.fx.Graph with {self._len} nodes>"
