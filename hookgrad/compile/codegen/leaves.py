"""Leaf accumulation inside a compiled backward, at eager's point (NOTE [Leaves in the compiled backward]).

NOTE [Leaves in the compiled backward]
Under ``aot_eager``/``inductor`` a graph's backward is one node, ``CompiledFunctionBackward``,
standing for every eager node of the graph. Eager's engine runs a leaf's ``AccumulateGrad`` as
soon as its last gradient arrives (its priority is the highest, NOTE [Engine order]): right
after the graph node that is the leaf's last consumer in backward order, before the rest of the
graph. A parameter's post-accumulate hook, an input's tensor hook, or a ``.grad`` read by a
module backward hook therefore observe the leaf at that point. (PyTorch's ``torch.compile``
returns every leaf gradient at the end of its one node, so those hooks run after the whole
graph there; hookgrad keeps eager's order, contract §0.1.)

So the generated backward (and the rule walk) call ``leaf(k, g)`` where the engine's schedule
puts input `k`'s accumulator (`schedule.backward_order`), right after the step that completes
its gradient: it runs the input's accumulator then and there when the running
pass would run it next (`hookgrad.autograd._schedule.run_ready_now`: a leaf whose accumulator
waits for no other edge) and returns None, the gradient then being delivered; otherwise it
returns `g` and the engine routes it as usual. Leaves completed by one step are handed over in
the order eager's engine would run their accumulators (the schedule's heap; ``F.linear``: the
bias, then the input, then the weight, whose gradient passes one more node, ``TBackward0``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from hookgrad._tensor import Tensor
from hookgrad.autograd._schedule import run_ready_now

__all__ = ["leaf_runner", "keep"]

_make = Tensor._make


def keep(k: int, g: Any) -> Any:
    """The ``leaf`` of a run that must not accumulate (a validation run): keeps `g`."""
    return g


def leaf_runner(node: Any) -> Any:
    """``leaf(k, g) -> g or None`` for the backward of compiled-function node `node` (its
    edge `k` leads to input `k`)."""
    edges = node._next_edges
    meta = node.input_metadata()

    def leaf(k: int, g: Any) -> Any:
        if g is None:
            return None
        target = edges[k][0]
        m = meta[k] if k < len(meta) else None
        g = np.asarray(g)
        if m is None or g.shape != m[0] or g.dtype != m[1]:
            return g  # the engine conforms it (a cast or a reduction) on its way
        return None if run_ready_now(target, _make(g)) else g
    return leaf
