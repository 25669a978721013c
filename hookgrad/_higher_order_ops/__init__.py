"""``hookgrad._higher_order_ops``: the control-flow operators of ``torch._higher_order_ops``.

PyTorch's own compile tests reach ``torch._higher_order_ops.cond`` (the very function
``torch.cond`` is) and ``while_loop``. hookgrad runs them as the Python control flow they
describe; inside a compiled region a tensor predicate is data-dependent control flow, which
breaks the graph (sound, never a branch baked in).

Mirrors: ``torch._higher_order_ops``.
"""

from __future__ import annotations

from hookgrad._higher_order_ops.while_loop import while_loop
from hookgrad.compile.trace.control_flow import cond

__all__ = ["cond", "while_loop"]
