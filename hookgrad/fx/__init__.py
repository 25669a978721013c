"""``hookgrad.fx``: symbolic tracing, the graph IR, code generation and graph passes.

Mirrors: ``torch.fx``.
"""

from __future__ import annotations

from hookgrad.fx import immutable_collections, node  # noqa: F401
from hookgrad.fx._symbolic_trace import PH, ParameterProxy, Tracer, symbolic_trace, wrap
from hookgrad.fx.graph import Graph
from hookgrad.fx.graph_module import GraphModule
from hookgrad.fx.node import Node, map_arg
from hookgrad.fx.proxy import Proxy, TraceError
from hookgrad.fx import graph, graph_module, proxy  # noqa: E402,F401

__all__ = ["Graph", "GraphModule", "Node", "PH", "ParameterProxy", "Proxy", "TraceError",
           "Tracer", "map_arg", "symbolic_trace", "wrap"]
