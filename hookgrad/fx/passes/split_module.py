"""`split_module`: cut a GraphModule into submodules chosen by a callback, one per partition.

Each non-input node goes to the partition ``split_callback(node)`` names. A value defined in one
partition and used in another (or by the output) becomes an output of the first and an input of
the second; each partition becomes a ``GraphModule`` child ``submod_<id>`` and the returned
module calls them in a dependency (topological) order, or in the order partitions first appear
with ``keep_original_order=True``. A partition with several outputs returns a tuple that the
parent unpacks with ``getitem`` nodes.

Global-state nodes (``hookgrad._C._set_grad_enabled``) are not values: every later partition
that the grad-mode region spans gets its own copy at its start, so each submodule sets the
mode it runs under, and partitions must then be numbered in increasing order.

Mirrors: ``torch.fx.passes.split_module``.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

from hookgrad._C import _set_grad_enabled
from hookgrad.fx.graph import Graph
from hookgrad.fx.graph_module import GraphModule
from hookgrad.fx.node import Node, map_arg
from hookgrad.fx.proxy import Proxy
from hookgrad.nn.modules.module import Module

__all__ = ["Partition", "split_module"]


class Partition:
    """One partition being built: its nodes, its cross-partition inputs and outputs, its graph.

    Mirrors: ``torch.fx.passes.split_module.Partition``.
    """

    def __init__(self, name: str) -> None:
        self.name = name
        self.submod_name = f"submod_{name}"
        self.node_names: list[str] = []
        # dicts used as ordered sets: first-use order decides argument and output order
        self.inputs: dict[str, None] = {}
        self.outputs: dict[str, None] = {}
        self.dependencies: dict[str, None] = {}
        self.dependents: dict[str, None] = {}
        self.graph = Graph()
        self.environment: dict[Node, Node] = {}
        self.targets: dict[str, Any] = {}

    def __repr__(self) -> str:
        return (f"name: {self.name},\n nodes: {self.node_names},\n inputs: {self.inputs},\n"
                f" outputs: {self.outputs},\n partitions depended on: {self.dependencies},\n"
                f" partition dependents: {self.dependents}")


def _attr_at(mod: Any, qualname: str) -> Any:
    value = mod
    for atom in qualname.split("."):
        if not hasattr(value, atom):
            raise AttributeError(f"Node target {qualname} not found!")
        value = getattr(value, atom)
    return value


def _is_state_node(node: Node) -> bool:
    return node.op == "call_function" and node.target is _set_grad_enabled


def _assign_partitions(m: GraphModule, split_callback: Callable[[Node], int],
                       partition_affix: str | None) -> tuple[dict[str, Partition], dict]:
    """Give every computing node its partition; collect grad-mode regions."""
    partitions: dict[str, Partition] = {}
    grad_regions: dict[Node, set[int]] = {}
    active_grad = None
    for node in m.graph.nodes:
        if node.op in ("placeholder", "get_attr", "output"):
            continue
        pid = split_callback(node)
        name = str(pid) if partition_affix is None else f"{partition_affix}_{pid}"
        partition = partitions.get(name)
        if partition is None:
            partitions[name] = partition = Partition(name)
        partition.node_names.append(node.name)
        node._fx_partition = name
        if _is_state_node(node):
            if len(node.args) != 1 or not isinstance(node.args[0], bool):
                raise AssertionError("_set_grad_enabled takes one bool argument")
            active_grad = node
            grad_regions[node] = {pid}
        if active_grad is not None:
            grad_regions[active_grad].add(pid)
    return partitions, {k: sorted(v) for k, v in grad_regions.items()}


def _record_uses(m: GraphModule, partitions: dict[str, Partition], split_callback: Callable,
                 monotonic: bool) -> None:
    """Make each cross-partition value an output of its definer and an input of its user."""

    def record(def_node: Node, use_node: Node | None) -> None:
        defined = getattr(def_node, "_fx_partition", None)
        used = getattr(use_node, "_fx_partition", None)
        if defined == used:
            return
        if defined is not None:
            partitions[defined].outputs.setdefault(def_node.name)
            if used is not None:
                partitions[defined].dependents.setdefault(used)
        if used is not None:
            partitions[used].inputs.setdefault(def_node.name)
            if defined is not None:
                partitions[used].dependencies.setdefault(defined)

    highest = -1
    for node in m.graph.nodes:
        if node.op in ("placeholder", "get_attr"):
            continue
        if node.op == "output":
            map_arg(node.args[0], lambda n: record(n, None))
            continue
        if monotonic:
            pid = split_callback(node)
            if highest > pid:
                raise AssertionError(
                    "autocast or set_grad_enabled require monotonically increasing partitions: "
                    f"highest: {highest}, this node's: {pid}")
            highest = pid
        if not _is_state_node(node):
            map_arg(node.args, lambda d: record(d, node))
            map_arg(node.kwargs, lambda d: record(d, node))


def _topological_order(partitions: dict[str, Partition]) -> list[str]:
    pending = {name: dict(p.dependencies) for name, p in partitions.items()}
    roots = [name for name, deps in pending.items() if not deps]
    order: list[str] = []
    while roots:
        # a stack, as PyTorch's: the last root found runs first
        root = roots.pop()
        order.append(root)
        for dependent in partitions[root].dependents:
            pending[dependent].pop(root, None)
            if not pending[dependent]:
                roots.append(dependent)
    if len(order) != len(partitions):
        raise RuntimeError("cycle exists between partitions!")
    return order


def _add_inputs(m: GraphModule, partition: Partition, orig_nodes: dict[str, Node],
                keep_original_input_name: bool) -> None:
    """Placeholders for the partition's inputs; submodules stay attributes (``get_attr``)."""
    is_module_attr = {
        name: orig_nodes[name].op == "get_attr"
        and isinstance(_attr_at(m, orig_nodes[name].target), Module)
        for name in partition.inputs}
    ordered = ([n for n in partition.inputs if not is_module_attr[n]]
               + [n for n in partition.inputs if is_module_attr[n]])
    kept: dict[str, None] = {}
    for counter, inp in enumerate(n for n in ordered if not is_module_attr[n]):
        name = inp if keep_original_input_name else f"arg_{counter}"
        placeholder = partition.graph.placeholder(name, type_expr=orig_nodes[inp].type)
        placeholder.meta = orig_nodes[inp].meta.copy()
        partition.environment[orig_nodes[inp]] = placeholder
        kept[inp] = None
    for inp in (n for n in ordered if is_module_attr[n]):
        target = orig_nodes[inp].target
        node = partition.graph.get_attr(target)
        node.meta = orig_nodes[inp].meta.copy()
        partition.targets[target] = _attr_at(m, target)
        partition.environment[orig_nodes[inp]] = node
    partition.inputs = kept


def _copy_nodes(m: GraphModule, partitions: dict[str, Partition],
                qualname_map: dict[str, str] | None, keep_original_node_name: bool) -> None:
    for node in m.graph.nodes:
        if not hasattr(node, "_fx_partition"):
            continue
        partition = partitions[node._fx_partition]
        env = partition.environment
        args = map_arg(node.args, lambda n: env[n])
        kwargs = map_arg(node.kwargs, lambda n: env[n])
        target = node.target
        if node.op in ("call_module", "get_attr"):
            # submodules and attributes are flattened into the partition: "a.b" -> "a_b"
            target = node.target.replace(".", "_")
            partition.targets[target] = _attr_at(m, node.target)
            if qualname_map is not None:
                qualname_map[f"{partition.submod_name}.{target}"] = node.target
        new_node = partition.graph.create_node(
            node.op, target, args, kwargs, type_expr=node.type,
            name=node.name if keep_original_node_name else None)
        new_node.meta = node.meta.copy()
        env[node] = new_node


def _copy_input(node: Node, graph: Graph, env: dict[str, Node], attrs: dict[str, Any],
                m: GraphModule) -> None:
    """Recreate a placeholder or get_attr node of the original graph in the parent graph."""
    if node.name in env:
        return
    if node.op == "placeholder":
        default = node.args[0] if node.args else inspect.Signature.empty
        env[node.name] = graph.placeholder(node.target, type_expr=node.type,
                                           default_value=default)
    elif node.op == "get_attr":
        env[node.name] = graph.get_attr(node.target)
        attrs[node.target] = _attr_at(m, node.target)
    else:
        return
    env[node.name].meta = node.meta.copy()


def split_module(m: GraphModule, root_m: Module, split_callback: Callable[[Node], int],
                 qualname_map: dict[str, str] | None = None,
                 keep_original_order: bool | None = False,
                 keep_original_node_name: bool | None = False,
                 keep_original_input_name: bool = True, *,
                 partition_affix: str | None = None,
                 tuple_return: bool = False) -> GraphModule:
    """Split ``m`` into ``submod_<id>`` children chosen by ``split_callback`` (see module doc).

    ``root_m`` is unused, as in PyTorch. ``qualname_map`` (if given) is filled with new
    submodule paths -> original paths.

    Mirrors: ``torch.fx.passes.split_module.split_module``.
    """
    partitions, grad_regions = _assign_partitions(m, split_callback, partition_affix)
    _record_uses(m, partitions, split_callback, monotonic=bool(grad_regions))
    orig_nodes = {node.name: node for node in m.graph.nodes}
    first_seen_order = list(partitions)
    sorted_partitions = _topological_order(partitions)

    # grad-mode regions: the first partition computes the node, later ones get a copy up front
    for node, regions in grad_regions.items():
        partitions[str(regions[0])].environment[node] = node
        for r in regions[1:]:
            partition = partitions[str(r)]
            copy = partition.graph.create_node(node.op, node.target, tuple(node.args), {},
                                               type_expr=node.type)
            copy.meta = node.meta.copy()
            partition.environment[node] = copy

    for name in sorted_partitions:
        _add_inputs(m, partitions[name], orig_nodes, keep_original_input_name)
    _copy_nodes(m, partitions, qualname_map, bool(keep_original_node_name))

    graph = Graph()
    env: dict[str, Node] = {}
    attrs: dict[str, Any] = {}
    placeholders = [n for n in m.graph.nodes if n.op == "placeholder"]
    if not keep_original_order:
        for node in m.graph.nodes:
            _copy_input(node, graph, env, attrs, m)
    for name in (first_seen_order if keep_original_order else sorted_partitions):
        partition = partitions[name]
        outputs = tuple(partition.environment[orig_nodes[o]] for o in partition.outputs)
        partition.graph.output(outputs[0] if len(outputs) == 1 and not tuple_return
                               else outputs)
        if keep_original_order:
            for node in placeholders + [orig_nodes[k] for k in partition.inputs]:
                _copy_input(node, graph, env, attrs, m)
        attrs[partition.submod_name] = GraphModule(partition.targets, partition.graph)
        call = graph.call_module(partition.submod_name,
                                 tuple(env[i] for i in partition.inputs))
        if len(partition.outputs) > 1 or (partition.outputs and tuple_return):
            proxy = Proxy(call)
            for i, out_name in enumerate(partition.outputs):
                env[out_name] = proxy[i].node
        elif partition.outputs:
            env[next(iter(partition.outputs))] = call
    if keep_original_order and not env:
        for node in m.graph.nodes:
            _copy_input(node, graph, env, attrs, m)
    for node in m.graph.nodes:
        if node.op == "output":
            graph.output(map_arg(node.args[0], lambda n: env[n.name]))
    result = GraphModule(attrs, graph)
    result.meta["partition_names"] = {p.submod_name for p in partitions.values()}
    return result
