"""The graph-level autograd API: nodes, gradient edges, multi-grad and saved-tensor hooks.

A facade over the modules that implement it (`_node`, `_edges`, `multi_grad`, `saved_hooks`);
it holds no logic, so everything below it can import those modules directly.

Mirrors: ``torch.autograd.graph``.
"""

from __future__ import annotations

from hookgrad.autograd._edges import get_gradient_edge
from hookgrad.autograd._node import GradientEdge, Node
from hookgrad.autograd.multi_grad import register_multi_grad_hook
from hookgrad.autograd.saved_hooks import (
    allow_mutation_on_saved_tensors,
    disable_saved_tensors_hooks,
    save_on_cpu,
    saved_tensors_hooks,
)

__all__ = [
    "Node",
    "GradientEdge",
    "get_gradient_edge",
    "register_multi_grad_hook",
    "saved_tensors_hooks",
    "save_on_cpu",
    "disable_saved_tensors_hooks",
    "allow_mutation_on_saved_tensors",
]
