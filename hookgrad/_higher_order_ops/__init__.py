"""``hookgrad._higher_order_ops``: the control-flow operators of ``torch._higher_order_ops``.

PyTorch's own compile tests reach ``torch._higher_order_ops.cond`` (the very function
``torch.cond`` is) and ``while_loop``; models import ``scan``, ``associative_scan`` (Mamba in
transformers, at load time) and ``map``, which run eagerly in PyTorch's order of operations. hookgrad runs them as the Python control flow they
describe; inside a compiled region a tensor predicate is data-dependent control flow, which
breaks the graph (sound, never a branch baked in).

Mirrors: ``torch._higher_order_ops``.
"""

from __future__ import annotations

from hookgrad._higher_order_ops.associative_scan import associative_scan
from hookgrad._higher_order_ops.map import map  # noqa: A004 - PyTorch's name
from hookgrad._higher_order_ops.scan import scan
from hookgrad._higher_order_ops.while_loop import while_loop
from hookgrad.compile.trace.control_flow import cond

__all__ = ["associative_scan", "cond", "map", "scan", "while_loop"]
