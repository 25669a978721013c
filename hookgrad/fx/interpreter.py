"""`Interpreter` runs a graph node by node; `Transformer` re-traces it into a new graph.

Each node kind has an overridable method of the same name (``placeholder``, ``get_attr``,
``call_function``, ``call_method``, ``call_module``, ``output``), so a pass customises one
kind of step without re-implementing the walk.
"""

from __future__ import annotations

import inspect
from collections.abc import Iterator
from typing import Any

from hookgrad.fx._kinds import check_covers
from hookgrad.fx._patcher import Patcher, patch_public
from hookgrad.fx._symbolic_trace import Tracer
from hookgrad.fx.graph import Graph
from hookgrad.fx.graph_module import GraphModule
from hookgrad.fx.node import Argument, Node, Target, map_aggregate, map_arg
from hookgrad.fx.proxy import Proxy
from hookgrad.nn import Module

__all__ = ["Interpreter", "Transformer"]


class Interpreter:
    """Run a `GraphModule` (or a graph over a module) one node at a time.

    Args:
        module: the module whose attributes and submodules the graph refers to.
        garbage_collect_values: drop each value after its last use.
        graph: the graph to run (default: ``module.graph``).

    Example:
        >>> import hookgrad as torch
        >>> gm = torch.fx.symbolic_trace(lambda x: x * 2)
        >>> torch.fx.Interpreter(gm).run(torch.tensor([1.0]))
        tensor([2.])

    Mirrors: ``torch.fx.Interpreter``.
    """

    def __init__(self, module: Module, garbage_collect_values: bool = True,
                 graph: Graph | None = None) -> None:
        self.module = module
        self.submodules = dict(module.named_modules())
        self.graph: Graph = graph if graph is not None else module.graph  # type: ignore[assignment]
        self.env: dict[Node, Any] = {}
        self.name = "Interpreter"
        self.garbage_collect_values = garbage_collect_values
        self.extra_traceback = True
        self.user_to_last_uses: dict[Node, list[Node]] = {}
        if garbage_collect_values:
            seen: set[Node] = set()
            for node in reversed(self.graph.nodes):
                for inp in node._input_nodes:
                    if inp not in seen:
                        seen.add(inp)
                        self.user_to_last_uses.setdefault(node, []).append(inp)

    def run(self, *args: Any, initial_env: dict[Node, Any] | None = None,
            enable_io_processing: bool = True) -> Any:
        """Run the graph on `args` and return the output node's value.

        Mirrors: ``torch.fx.Interpreter.run``.
        """
        self.env = initial_env if initial_env is not None else {}
        self.args_iter: Iterator[Any] = iter(args)
        for node in self.graph.nodes:
            if node in self.env:
                continue  # pre-filled by initial_env
            try:
                self.env[node] = self.run_node(node)
            except Exception as e:
                if self.extra_traceback:
                    _annotate(e, node)
                    if isinstance(e, KeyError):
                        raise RuntimeError(*e.args) from e
                raise
            if self.garbage_collect_values:
                for dead in self.user_to_last_uses.get(node, []):
                    del self.env[dead]
            if node.op == "output":
                return self.env[node]
        return None

    def boxed_run(self, args_list: list[Any]) -> Any:
        """Run with arguments passed in a list, which is cleared. Mirrors: ``boxed_run``."""
        args = list(args_list)
        args_list.clear()
        return self.run(*args)

    def run_node(self, n: Node) -> Any:
        """Run one node: fetch its arguments, then call the method named after its kind.

        Mirrors: ``torch.fx.Interpreter.run_node``.
        """
        args, kwargs = self.fetch_args_kwargs_from_env(n)
        return getattr(self, n.op)(n.target, args, kwargs)

    # ------------------------------------------------------------------ one method per kind
    def placeholder(self, target: Target, args: tuple, kwargs: dict) -> Any:
        """The next positional input (the rest for ``*args``; else the default).

        Mirrors: ``torch.fx.Interpreter.placeholder``.
        """
        if target.startswith("*"):
            return list(self.args_iter)
        try:
            return next(self.args_iter)
        except StopIteration as si:
            if len(args) > 0:
                return args[0]
            raise RuntimeError(f"Expected positional argument for parameter {target}, but one "
                               "was not passed in!") from si

    def get_attr(self, target: Target, args: tuple, kwargs: dict) -> Any:
        """``module.<target>``. Mirrors: ``torch.fx.Interpreter.get_attr``."""
        return self.fetch_attr(target)

    def call_function(self, target: Target, args: tuple, kwargs: dict) -> Any:
        """``target(*args, **kwargs)``. Mirrors: ``torch.fx.Interpreter.call_function``."""
        return target(*args, **kwargs)

    def call_method(self, target: Target, args: tuple, kwargs: dict) -> Any:
        """``args[0].<target>(*args[1:])``. Mirrors: ``torch.fx.Interpreter.call_method``."""
        self_obj, *rest = args
        return getattr(self_obj, target)(*rest, **kwargs)

    def call_module(self, target: Target, args: tuple, kwargs: dict) -> Any:
        """Call the submodule (through ``Module.__call__``: its hooks fire).

        Mirrors: ``torch.fx.Interpreter.call_module``.
        """
        return self.fetch_attr(target)(*args, **kwargs)

    def output(self, target: Target, args: tuple, kwargs: dict) -> Any:
        """The returned value. Mirrors: ``torch.fx.Interpreter.output``."""
        return args[0]

    # ------------------------------------------------------------------ helpers
    def fetch_attr(self, target: str) -> Any:
        """The attribute at dotted path `target` of the module.

        Raises:
            RuntimeError: if a path component is missing.

        Mirrors: ``torch.fx.Interpreter.fetch_attr``.
        """
        atoms = target.split(".")
        obj: Any = self.module
        for i, atom in enumerate(atoms):
            if not hasattr(obj, atom):
                raise RuntimeError(f"Node referenced nonexistent target {'.'.join(atoms[:i + 1])}")
            obj = getattr(obj, atom)
        return obj

    def fetch_args_kwargs_from_env(self, n: Node) -> tuple[tuple, dict]:
        """`n`'s arguments with every node replaced by its value.

        Mirrors: ``torch.fx.Interpreter.fetch_args_kwargs_from_env``.
        """
        return self.map_nodes_to_values(n.args, n), self.map_nodes_to_values(n.kwargs, n)

    def map_nodes_to_values(self, args: Argument, n: Node) -> Argument:
        """Replace each node in `args` by its value in the environment.

        Raises:
            RuntimeError: for a node that has no value (the graph is not topologically sorted).

        Mirrors: ``torch.fx.Interpreter.map_nodes_to_values``.
        """

        def load_arg(n_arg: Node) -> Any:
            if n_arg not in self.env:
                raise RuntimeError(f"Node {n} referenced nonexistent value {n_arg}! Run "
                                   "Graph.lint() to diagnose such issues")
            return self.env[n_arg]

        return map_arg(args, load_arg)


check_covers({op: getattr(Interpreter, op) for op in (
    "placeholder", "get_attr", "call_function", "call_method", "call_module", "output")},
    "Interpreter")


def _annotate(e: Exception, node: Node) -> None:
    msg = f"While executing {node.format_node()}"
    msg = f"{e.args[0]}\n\n{msg}" if e.args else msg
    msg += f"\nOriginal traceback:\n{node.stack_trace}"
    try:
        e.args = (msg, *e.args[1:])
    except (AttributeError, TypeError):  # some exception types fix their args
        pass


class _TransformerTracer(Tracer):
    def __init__(self, graph: Graph) -> None:
        super().__init__()
        self.graph = graph
        self.tensor_attrs = {}

    def is_leaf_module(self, m: Module, module_qualified_name: str) -> bool:
        return True


class Transformer(Interpreter):
    """An Interpreter whose steps build a new graph; ``transform()`` returns a GraphModule.

    Override a kind's method to rewrite nodes of that kind (return a Proxy of the new value).

    Mirrors: ``torch.fx.Transformer``.
    """

    def __init__(self, module: GraphModule) -> None:
        super().__init__(module)
        self.new_graph = Graph()
        self.tracer = _TransformerTracer(self.new_graph)
        self.tracer.root = module

    def placeholder(self, target: Target, args: tuple, kwargs: dict) -> Proxy:
        """A placeholder of the new graph. Mirrors: ``torch.fx.Transformer.placeholder``."""
        default = next(iter(args)) if args else inspect.Signature.empty
        return Proxy(self.new_graph.placeholder(target, default_value=default), self.tracer)

    def get_attr(self, target: Target, args: tuple, kwargs: dict) -> Proxy:
        """A ``get_attr`` of the new graph. Mirrors: ``torch.fx.Transformer.get_attr``."""
        return self.tracer.create_proxy("get_attr", target, args, kwargs)

    def call_module(self, target: Target, args: tuple, kwargs: dict) -> Any:
        """A ``call_module`` of the new graph. Mirrors: ``torch.fx.Transformer.call_module``."""
        submod = self.fetch_attr(target)
        return self.tracer.call_module(submod, submod.forward, args, kwargs)

    def call_function(self, target: Target, args: tuple, kwargs: dict) -> Any:
        """A ``call_function`` of the new graph. Mirrors: ``Transformer.call_function``."""
        return self.tracer.create_proxy("call_function", target, args, kwargs)

    def transform(self) -> GraphModule:
        """Run the transformation and return the new GraphModule.

        Mirrors: ``torch.fx.Transformer.transform``.
        """
        # Overrides may call public functions on the Proxies they receive (``hookgrad.neg(*args)``)
        with Patcher() as patcher:
            patch_public(patcher)
            result = super().run(enable_io_processing=False)
        if result is not None:
            value = map_aggregate(result, lambda a: a.node if isinstance(a, Proxy) else a)
            out = self.new_graph.output(value)
            out.meta.update(list(self.graph.nodes)[-1].meta)
        return GraphModule(self.module, self.new_graph)
