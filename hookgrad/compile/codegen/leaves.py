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

So the generated backward (and the rule walk) call ``leaf(k, [g])`` where the engine's schedule
puts input `k`'s accumulator (`schedule.backward_order`), right after the step that completes
its gradient: it runs the input's accumulator then and there when the running
pass would run it next (`hookgrad.autograd._schedule.run_ready_now`: a leaf whose accumulator
waits for no other edge) and returns None, the gradient then being delivered; otherwise it
returns `g` and the engine routes it as usual. Leaves completed by one step are handed over in
the order eager's engine would run their accumulators (the schedule's heap; ``F.linear``: the
bias, then the input, then the weight, whose gradient passes one more node, ``TBackward0``).
"""

from __future__ import annotations

import sys
from typing import Any

import numpy as np

from hookgrad._tensor import Tensor
from hookgrad.autograd._schedule import run_ready_now

__all__ = ["leaf_runner", "keep"]

_make = Tensor._make
_ndarray = np.ndarray


def keep(k: int, box: list) -> Any:
    """The ``leaf`` of a run that must not accumulate (a validation run): keeps the
    gradient."""
    return box.pop()


def leaf_runner(node: Any) -> Any:
    """``leaf(k, [g]) -> g or None`` for the backward of compiled-function node `node` (its
    edge `k` leads to input `k`). The gradient comes in a one-item list the caller gives up
    (NOTE [Fresh gradients])."""
    edges = node._next_edges
    meta = node.input_metadata()

    def leaf(k: int, box: list) -> Any:
        g = box.pop()
        if g is None:
            return None
        target = edges[k][0]
        m = meta[k] if k < len(meta) else None
        g = np.asarray(g)
        if m is None or g.shape != m[0] or g.dtype != m[1]:
            return g  # the engine conforms it (a cast or a reduction) on its way
        # references to g: this local and getrefcount's argument, nothing else
        owned = sys.getrefcount(g) <= 2 and _fresh(g)
        return None if run_ready_now(target, _make(g), owned) else g
    return leaf


# NOTE [Fresh gradients]
# A leaf's first ``.grad`` may keep the memory of the gradient the compiled backward made, as
# eager keeps a gradient nobody else holds (NOTE [Stealing a gradient] in autograd/_nodes.py);
# a copy of every parameter gradient cost about a quarter of a compiled MLP step's backward
# (fresh pages for each copy). The caller hands the gradient over in a one-item list and
# drops its own name for it (``_b = [g3]; g3 = None``), so `leaf` holds the only reference
# a frame can hold, whatever calling convention the interpreter used: a count of 2 (its
# local, getrefcount's argument) proves that no other gradient, forward value, output
# gradient or hook holds the array. Its memory must also be its own: writeable, row-major,
# and either owning its buffer or a whole-array view of an array nothing else refers to
# (``(a.T @ b).T.T``). Anything else is copied, as before.


def _fresh(g: Any) -> bool:
    """Whether `g`'s memory is reachable only through `g` (NOTE [Fresh gradients])."""
    if type(g) is not _ndarray or not g.flags.c_contiguous or not g.flags.writeable:
        return False
    owner = g.base
    if owner is None:
        return True
    # references to owner: g's base pointer, the local `owner`, getrefcount's argument
    return (type(owner) is _ndarray and owner.base is None and owner.size == g.size
            and sys.getrefcount(owner) <= 3)
