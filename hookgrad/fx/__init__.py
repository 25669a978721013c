"""``hookgrad.fx``: symbolic tracing, the graph IR, code generation and graph passes.

Mirrors: ``torch.fx``.
"""

from __future__ import annotations

from hookgrad.fx import immutable_collections, node  # noqa: F401
from hookgrad.fx._symbolic_trace import PH, ParameterProxy, Tracer, symbolic_trace, wrap
from hookgrad.fx.graph import Graph, PythonCode
from hookgrad.fx.graph_module import GraphModule
from hookgrad.fx.interpreter import Interpreter, Transformer
from hookgrad.fx.node import Node, map_arg
from hookgrad.fx.proxy import Proxy, TraceError
from hookgrad.fx import graph, graph_module, interpreter, passes, proxy  # noqa: E402,F401
from hookgrad.fx import subgraph_rewriter  # noqa: E402,F401
from hookgrad.fx.subgraph_rewriter import replace_pattern  # noqa: E402

__all__ = ["Graph", "GraphModule", "Interpreter", "Node", "PH", "ParameterProxy", "Proxy",
           "PythonCode", "TraceError", "Tracer", "Transformer", "map_arg", "replace_pattern",
           "symbolic_trace", "wrap"]
