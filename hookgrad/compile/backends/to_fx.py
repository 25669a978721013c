"""The pass from compile's primitive-level graph to the user-level graph custom backends receive.

``torch.compile`` hands a custom backend ``(gm, example_inputs)`` with ``gm`` a
``torch.fx.GraphModule`` of the calls the user wrote. hookgrad's trace records primitives at
`bind` into a ``hookgrad.fx.Graph`` and notes which public call made which nodes
(`trace.user_calls`, kept in ``gm.meta``); this pass builds a second fx graph where a note whose
nodes form a closed group (only the call's own tensor arguments flow in, only its result flows
out) becomes one fx node (``call_method "relu"``, ``operator.mul`` with its Python scalar,
``hookgrad.sin``), and everything else keeps its recorded node (a primitive re-run through
`bind`, a hook operator, a multi-output pick).

Placeholders come first, in the order the compiled call passes its inputs. Both graphs are
``hookgrad.fx`` graphs (as dynamo's graph and AOT autograd's graph are two fx graphs in PyTorch):
the built-in backends and the codegen read the primitive one, a custom backend the user-level one.
"""

from __future__ import annotations

import operator
from typing import Any, NamedTuple

from hookgrad.compile.core.graph import (
    FACTORY_CALLS,
    PRIMITIVE_LEVEL,
    USER_CALLS,
    Graph,
    GraphModule,
    Node,
)
from hookgrad.compile.trace.recorder import getitem as core_getitem
from hookgrad.compile.trace.user_calls import instances_in
from hookgrad.fx.node import map_arg

__all__ = ["to_fx", "core_module_of", "ExampleValue"]


class ExampleValue(NamedTuple):
    """``node.meta["example_value"]`` of a tensor node: what the trace saw (PyTorch stores a
    FakeTensor there; hookgrad has no fake tensors, so shape and dtype)."""

    shape: tuple
    dtype: Any


def _meta(core_meta: dict) -> dict:
    meta = dict(core_meta)
    if "shape" in meta and "dtype" in meta:
        meta["example_value"] = ExampleValue(tuple(meta["shape"]), meta["dtype"])
    return meta

_CORE_ATTR = "_hookgrad_core_module"


class _Named:
    """A compile-internal target whose name is no identifier (a user lambda re-run by a
    composite node): the emitter needs a name to print, as torch.fx cannot print lambdas."""

    def __init__(self, fn: Any, name: str) -> None:
        self.fn, self.__name__, self.__qualname__ = fn, name, name
        self.__module__ = "hookgrad.compile.backends.to_fx"

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.fn(*args, **kwargs)


def _target(t: Any) -> Any:
    """A primitive graph's ``call_function`` target as the user-level graph carries it."""
    if t is core_getitem:
        return operator.getitem
    name = getattr(t, "__name__", None)
    if isinstance(name, str) and not name.isidentifier():
        return _Named(t, "".join(c if c.isalnum() else "_" for c in name).strip("_") or "call")
    return t


def core_module_of(gm: Any) -> Any:
    """Compile's primitive-level module behind `gm` (itself when it is one): what built-in
    backends run."""
    if isinstance(gm, GraphModule) and gm.meta.get(PRIMITIVE_LEVEL):
        return gm
    return getattr(gm, _CORE_ATTR, gm)


def _in_place_method(call: Any) -> bool:
    t = call.target
    return call.kind == "call_method" and t.endswith("_") and not t.endswith("__") and \
        bool(call.args) and isinstance(call.args[0], Node)


class _Folding:
    """Which user calls fold into one fx node, and which of their nodes disappear."""

    def __init__(self, graph: Graph, user_calls: list) -> None:
        self.nodes = list(graph.nodes)
        self.index = {id(n): i for i, n in enumerate(self.nodes)}
        # (fx nodes keep their use lists)
        self.users = [{self.index[id(u)] for u in n.users} for n in self.nodes]
        self.at: dict[int, Any] = {}  # node index where a folded call is emitted -> the call
        self.gone: set[int] = set()  # nodes a folded call replaces
        for call in user_calls:
            self._try(call)

    def _try(self, call: Any) -> None:
        nodes, index, users = self.nodes, self.index, self.users
        span = range(call.start, min(call.end, len(nodes)))
        group = {i for i in span if nodes[i].op == "call_function"
                 and not (nodes[i].target is core_getitem
                          and not call.start <= index[id(nodes[i].args[0])] < call.end)}
        result = index.get(id(call.result))
        if result not in group or group & self.gone:
            return
        given = {id(a) for a in instances_in((call.args, call.kwargs), Node)}
        dropped = set()
        for i in group:
            if i != result and not users[i] <= group:
                return  # an inner value is used after the call
            for a in nodes[i].all_input_nodes:
                j = index[id(a)]
                if j in group or id(a) in given:
                    continue
                if nodes[j].op == "get_attr" and call.start <= j < call.end and users[j] <= group:
                    dropped.add(j)  # a wrapped Python scalar: the call keeps the scalar
                    continue
                return  # the call read a tensor it was not given
        self.gone |= group | dropped
        self.at[max(group)] = call


def to_fx(core: GraphModule) -> GraphModule:
    """The user-level ``hookgrad.fx.GraphModule`` computing what primitive-level `core` computes.

    Mirrors: the graph ``torch._dynamo`` passes to a custom backend.
    """
    graph = core.graph
    fold = _Folding(graph, core.meta.get(USER_CALLS, ()))
    factory_calls = core.meta.get(FACTORY_CALLS, {})
    out = Graph()
    env: dict[int, Any] = {}

    def arg(value: Any) -> Any:
        return map_arg(value, lambda n: env[id(n)])

    for node in graph.nodes:  # inputs first, in the order the compiled call passes them
        if node.op == "placeholder":
            env[id(node)] = out.placeholder(node.name, type_expr=node.meta.get("input_type"))
            env[id(node)].meta.update(_meta(node.meta))
    attrs: dict[str, Any] = {}
    for i, node in enumerate(graph.nodes):
        call = fold.at.get(i)
        if call is not None:
            new = out.create_node(call.kind, call.target, arg(call.args), arg(call.kwargs))
            if call.name:  # named after the variable it is stored in, as dynamo names it
                new._rename(call.name)
            new.meta.update(_meta(call.result.meta))
            new.meta["stack_trace"] = call.stack_trace
            # ``y.add_(1)`` returns `y` itself: later uses read `y`, as dynamo records them
            env[id(call.result)] = new if not _in_place_method(call) else new.args[0]
            continue
        if i in fold.gone or node.op == "placeholder":
            continue
        # (both graphs have fx's node kinds; the primitive graph has no call_method/call_module
        # nodes of its own: those come from folded user calls only)
        op = node.op
        if op == "get_attr":
            value = getattr(core, node.target)
            made = factory_calls.get(id(value))
            if made is not None and made[1] is value:
                new = out.create_node(made[0].kind, made[0].target, arg(made[0].args),
                                      arg(made[0].kwargs))
                if made[0].name:
                    new._rename(made[0].name)
                new.meta.update(_meta(node.meta))
                new.meta["stack_trace"] = made[0].stack_trace
                env[id(node)] = new
                continue
            # a hook body's graph becomes a child GraphModule (`print_readable` nests it)
            attrs[node.target] = to_fx(value) if isinstance(value, GraphModule) else value
            new = out.get_attr(node.target)
        elif op == "output":
            new = out.output(arg(node.args[0]))
        else:
            target = _target(node.target) if op == "call_function" else node.target
            new = out.create_node(op, target, arg(node.args), arg(node.kwargs), name=node.name)
            if node.meta.get("stored_name"):
                new._rename(node.meta["stored_name"])
        new.meta.update(_meta(node.meta))
        env[id(node)] = new
    gm = GraphModule(attrs, out)
    object.__setattr__(gm, _CORE_ATTR, core)
    return gm
