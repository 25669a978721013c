"""The engine's backward schedule, for the code that runs a backward pass other than the engine.

NOTE [One backward schedule]
The eager engine orders nodes by dependency counts and a ready heap (NOTE [Engine order] in
engine.py). Two other places need that same order: compiled autograd, which captures a pass as a
graph emitted node by node in the order the engine would run them, and a compiled function's
single backward node, which stands for many eager nodes and must run their steps, and let a
leaf's ``AccumulateGrad`` (and its tensor and post-accumulate hooks) run, at the points eager's
engine would (it schedules stand-ins of those nodes, hookgrad/compile/codegen/schedule.py).
Both use this module instead of restating the engine's rules:

- `schedule(root)`: the nodes the engine runs from `root`, in its order, with their dependency
  counts: the engine's own `count_dependencies`, `ReadyNode` and ``route`` hand-off rule;
- `run_ready_now(node, grad)`: called from inside a node's backward, run `node` (an accumulator)
  now with the running pass's hooks when that pass would run it right after the calling node.
"""

from __future__ import annotations

import heapq
from typing import Any

from hookgrad._config import STATE
from hookgrad._tensor import Tensor
from hookgrad.autograd._node import Node
from hookgrad.autograd._nodes import AccumulateGrad
from hookgrad.autograd.engine import ReadyNode, count_dependencies

__all__ = ["schedule", "run_ready_now"]


def schedule(root: Node) -> tuple[list, dict]:
    """``(order, deps)``: the nodes the eager engine runs from `root` (all of them reached,
    no ``inputs=`` pruning), in its order, and the dependency count of every node reached."""
    deps = count_dependencies(root, {})
    remaining = dict(deps)
    heap: list = []
    order = []
    node: Node | None = root
    while node is not None:
        order.append(node)
        ready = None
        for nxt, _ in node._next_edges:
            if nxt is None:
                continue
            left = remaining[nxt] - 1
            remaining[nxt] = left
            if left == 0:
                if ready is not None:
                    heapq.heappush(heap, ReadyNode(ready))
                ready = nxt
        # as the engine's ``route``: a lone ready node with an empty heap runs next directly
        if ready is not None and heap:
            heapq.heappush(heap, ReadyNode(ready))
            ready = None
        node = ready if ready is not None else (heapq.heappop(heap).node if heap else None)
    return order, deps


def run_ready_now(node: Any, grad: Tensor, owned: bool = False) -> bool:
    """Run accumulator `node` on `grad` now, as the running pass would right after the node
    calling this; False (nothing done) when the pass would not run it next.

    The pass runs an ``AccumulateGrad`` as soon as its last gradient arrives (its priority is
    the highest), so a node standing for many eager nodes calls this at the point where one of
    them would have delivered that last gradient. The pass's buffered gradients for `node` are
    added first, its hooks run at their points (NOTE [Per-node hook order]), and the edge is
    marked as delivered, so the engine does not run `node` again. `owned`: nothing else
    references `grad`'s memory, so a first ``.grad`` may keep it when no hook can see it and
    no buffered gradient is added (`accumulate_into`).
    """
    stack = STATE.graph_task_stack
    if not stack or type(node) is not AccumulateGrad:
        return False
    task = stack[-1]
    deps = task.deps
    if task.exec_info is not None or task.create_graph or deps.get(node) != 1:
        return False  # ``inputs=``/``grad()`` pruning, or another edge has yet to deliver
    buf = task.buffers.pop(node, None)
    old = buf[0] if buf else None
    total = grad if old is None else task.accumulate(old, grad)
    deps[node] = 0  # the caller's edge is delivered here; ``route`` then counts it below 0
    if node._has_hooks():
        task._run_hooked(node, [total], None)
    else:
        node.apply((total,), owned=owned and old is None)
    for poll in task.pollers:
        poll()
    return True
