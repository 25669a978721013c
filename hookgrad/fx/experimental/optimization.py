"""Inference-time graph rewrites: conv/linear + batch-norm fusion, dropout removal, subgraphs.

``fuse`` folds an eval-mode ``BatchNorm`` that directly follows a ``Conv1d/2d/3d`` or ``Linear``
(whose output nothing else reads) into the preceding layer's weights, using the same folding
functions as ``nn.utils.fusion``. ``remove_dropout`` turns every ``nn.Dropout`` call into its
input. hookgrad has no MKL-DNN layouts, so `optimize_for_inference` runs the first two passes
and accepts the MKL-DNN option only to switch it off.

Mirrors: ``torch.fx.experimental.optimization``.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable
from typing import Any

from hookgrad.fx._symbolic_trace import Tracer, symbolic_trace
from hookgrad.fx.graph import Graph
from hookgrad.fx.graph_module import GraphModule
from hookgrad.fx.interpreter import Transformer
from hookgrad.fx.node import Node
from hookgrad.nn.modules.batchnorm import BatchNorm1d, BatchNorm2d, BatchNorm3d
from hookgrad.nn.modules.conv import Conv1d, Conv2d, Conv3d
from hookgrad.nn.modules.dropout import Dropout
from hookgrad.nn.modules.linear import Linear
from hookgrad.nn.modules.module import Module
from hookgrad.nn.utils.fusion import fuse_conv_bn_eval, fuse_linear_bn_eval

__all__ = ["extract_subgraph", "fuse", "matches_module_pattern", "optimize_for_inference",
           "remove_dropout", "replace_node_module"]

_FUSABLE = ((Conv1d, BatchNorm1d), (Conv2d, BatchNorm2d), (Conv3d, BatchNorm3d),
            (Linear, BatchNorm1d))


def _parent_name(target: str) -> tuple[str, str]:
    *parent, name = target.rsplit(".", 1)
    return (parent[0] if parent else ""), name


def matches_module_pattern(pattern: Iterable[type], node: Node,
                           modules: dict[str, Module]) -> bool:
    """True when ``node`` and its first argument are calls of modules of exactly these types.

    Mirrors: ``torch.fx.experimental.optimization.matches_module_pattern``.
    """
    if len(node.args) == 0:
        return False
    for expected, current in zip(pattern, (node.args[0], node)):
        if not isinstance(current, Node) or current.op != "call_module":
            return False
        if not isinstance(current.target, str) or current.target not in modules:
            return False
        if type(modules[current.target]) is not expected:
            return False
    return True


def replace_node_module(node: Node, modules: dict[str, Module], new_module: Module) -> None:
    """Put ``new_module`` at the path ``node`` calls (in ``modules`` and in the module tree).

    Mirrors: ``torch.fx.experimental.optimization.replace_node_module``.
    """
    if not isinstance(node.target, str):
        raise AssertionError(f"Expected str target, got {type(node.target)}")
    parent, name = _parent_name(node.target)
    modules[node.target] = new_module
    setattr(modules[parent], name, new_module)


def fuse(model: Module, inplace: bool = False, no_trace: bool = False) -> Module:
    """Fold batch norms into the preceding conv/linear layer (a copy unless ``inplace``).

    Mirrors: ``torch.fx.experimental.optimization.fuse``.
    """
    if not inplace:
        model = copy.deepcopy(model)
    traced = model if no_trace and isinstance(model, GraphModule) else symbolic_trace(model)
    modules = dict(traced.named_modules())
    graph = copy.deepcopy(traced.graph)
    for pattern in _FUSABLE:
        for node in graph.nodes:
            if not matches_module_pattern(pattern, node, modules):
                continue
            if len(node.args[0].users) > 1:  # the un-normalised output is read elsewhere
                continue
            layer, bn = modules[node.args[0].target], modules[node.target]
            if not bn.track_running_stats:
                continue
            fold = fuse_linear_bn_eval if pattern[0] is Linear else fuse_conv_bn_eval
            replace_node_module(node.args[0], modules, fold(layer, bn))
            node.replace_all_uses_with(node.args[0])
            graph.erase_node(node)
    return GraphModule(traced, graph)


class _DropoutRemover(Transformer):
    def call_module(self, target: Any, args: tuple, kwargs: dict[str, Any]) -> Any:
        if isinstance(self.submodules[target], Dropout):
            if len(args) != 1:
                raise AssertionError(f"Expected 1 arg for Dropout, got {len(args)}")
            return args[0]
        return super().call_module(target, args, kwargs)


def remove_dropout(model: Module) -> Module:
    """A GraphModule of ``model`` without its ``nn.Dropout`` calls.

    Mirrors: ``torch.fx.experimental.optimization.remove_dropout``.
    """
    return _DropoutRemover(symbolic_trace(model)).transform()


def extract_subgraph(orig_module: Module, nodes: list[Node], inputs: list[Node],
                     outputs: list[Node]) -> GraphModule:
    """A GraphModule running ``nodes`` with ``inputs`` as placeholders, returning ``outputs``.

    Mirrors: ``torch.fx.experimental.optimization.extract_subgraph``.
    """
    graph = Graph()
    env: dict[Node, Node] = {}
    for inp in inputs:
        env[inp] = graph.placeholder(inp.name)
    for node in nodes:
        env[node] = graph.node_copy(node, lambda x: env[x])
    graph.output([env[out] for out in outputs])
    graph.lint()
    return GraphModule(orig_module, graph)


def optimize_for_inference(model: Module, pass_config: dict[str, Any] | None = None,
                           tracer: type[Tracer] = Tracer) -> Module:
    """Conv/BN fusion then dropout removal (``pass_config`` switches each off).

    The MKL-DNN layout pass of PyTorch has no counterpart here: hookgrad arrays have one
    layout. Mirrors: ``torch.fx.experimental.optimization.optimize_for_inference``.
    """
    config = {"conv_bn_fuse": True, "remove_dropout": True, "mkldnn_layout_optimize": False}
    config.update(pass_config or {})
    if config["conv_bn_fuse"]:
        model = fuse(model)
    if config["remove_dropout"]:
        model = remove_dropout(model)
    return model
