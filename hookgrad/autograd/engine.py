"""The backward engine: one `GraphTask` per ``backward()``/``grad()`` call (spec §1.2).

NOTE [Engine order]
Dependencies are counted over every node reachable from the roots; the ready queue is a binary
heap on the sequence number (largest first, AccumulateGrad = 2**64-1). Ties are broken exactly
like PyTorch's ``std::priority_queue``: `heapq`'s push and pop are the same sift algorithms as
libstdc++'s ``push_heap``/``pop_heap``, so items compare on the key alone (no insertion counter),
which reproduces PyTorch's order for nodes of equal priority (e.g. two leaves fed by one node).
With ``inputs=``, a node executes only when a path leads from it to a requested input; a
requested input of ``grad()`` is a *capture point* (spec §5.3).
"""

from __future__ import annotations

import heapq
from typing import Any

from hookgrad._config import STATE
from hookgrad._tensor import Tensor
from hookgrad.autograd._hook_points import (
    call_node_post_hooks,
    call_node_pre_hooks,
    call_tensor_pre_hooks,
)
from hookgrad.autograd.graph import Node


class _Ready:
    __slots__ = ("key", "node")

    def __init__(self, node: Node) -> None:
        self.key = -node._seq
        self.node = node

    def __lt__(self, other: _Ready) -> bool:
        return self.key < other.key


class GraphRoot(Node):
    """The node that feeds several roots' seeds (PyTorch creates one only for >1 root)."""

    __slots__ = ("_seeds",)

    def __init__(self, edges: tuple, seeds: list) -> None:
        super().__init__(edges)
        self._seeds = seeds

    def name(self) -> str:
        return "GraphRoot"

    def apply(self, grads: tuple, needed: tuple | None = None) -> tuple:
        return tuple(self._seeds)


class GraphTask:
    """State of one backward pass."""

    __slots__ = (
        "deps", "exec_info", "captures", "captured", "buffers", "heap", "callbacks",
        "create_graph", "retain_graph", "is_backward",
    )

    def __init__(self, create_graph: bool, retain_graph: bool, is_backward: bool) -> None:
        self.create_graph = create_graph
        self.retain_graph = retain_graph
        self.is_backward = is_backward
        self.deps: dict[Node, int] = {}
        self.exec_info: dict[Node, bool] | None = None  # None: every node executes
        self.captures: dict[Node, list] = {}
        self.captured: list = []
        self.buffers: dict[Node, list] = {}
        self.heap: list[_Ready] = []
        self.callbacks: list = []

    # ------------------------------------------------------------------ graph analysis
    def count_dependencies(self, root: Node) -> None:
        deps = self.deps
        seen = {root}
        stack = [root]
        while stack:
            node = stack.pop()
            for nxt, _ in node._next_edges:
                if nxt is None:
                    continue
                deps[nxt] = deps.get(nxt, 0) + 1
                if nxt not in seen:
                    seen.add(nxt)
                    stack.append(nxt)

    def compute_needed(self, root: Node, targets: list, accumulate: bool) -> None:
        """Mark nodes on a path to a target (iterative post-order; no recursion)."""
        info: dict[Node, bool] = {}
        target_nodes = {node for node, _, _ in targets}
        for node, slot, idx in targets:
            if not accumulate:
                self.captures.setdefault(node, []).append((slot, idx))
        self.captured = [None] * len(targets)
        done: set = set()
        stack: list = [(root, False)]
        while stack:
            node, expanded = stack.pop()
            if expanded:
                hit = accumulate and node in target_nodes
                for nxt, _ in node._next_edges:
                    if nxt is not None and (info.get(nxt) or nxt in self.captures):
                        hit = True
                info[node] = hit
                continue
            if node in done:
                continue
            done.add(node)
            stack.append((node, True))
            for nxt, _ in node._next_edges:
                if nxt is not None and nxt not in done:
                    stack.append((nxt, False))
        self.exec_info = info

    def should_execute(self, node: Node) -> bool:
        info = self.exec_info
        return info is None or info.get(node, False) or node in self.captures

    # ------------------------------------------------------------------ running
    def push(self, node: Node) -> None:
        heapq.heappush(self.heap, _Ready(node))

    def add_to_buffer(self, node: Node, slot: int, grad: Any) -> None:
        buf = self.buffers.get(node)
        if buf is None:
            buf = self.buffers[node] = [None] * node._num_slots()
        if grad is None:
            return
        old = buf[slot]
        buf[slot] = grad if old is None else old + grad

    def run(self) -> None:
        heap = self.heap
        while heap:
            node = heapq.heappop(heap).node
            grads = self.buffers.pop(node, None) or [None] * node._num_slots()
            if self.exec_info is not None and not self._capture(node, grads):
                continue
            outs = self.execute(node, grads)
            self.route(node, outs)
        self.run_callbacks()

    def _capture(self, node: Node, grads: list) -> bool:
        """Record captures for ``grad()``; False when the node must not execute."""
        caps = self.captures.get(node)
        needed = self.exec_info.get(node, False)  # type: ignore[union-attr]
        if not needed:
            grads = call_tensor_pre_hooks(node, grads)
        if caps:
            for slot, idx in caps:
                self.captured[idx] = grads[slot]
        return needed

    def execute(self, node: Node, grads: list) -> tuple:
        mask = None
        if self.exec_info is not None:
            mask = tuple(n is not None and self.should_execute(n) for n, _ in node._next_edges)
        if node._has_hooks():
            grads = call_tensor_pre_hooks(node, grads)
            grads = call_node_pre_hooks(node, grads)
            outs = node.apply(tuple(grads), mask)
            outs = call_node_post_hooks(node, outs, grads)
        else:
            outs = node.apply(tuple(grads), mask)
        if not self.retain_graph:
            node.release_saved()
        return outs

    def route(self, node: Node, outs: tuple) -> None:
        deps = self.deps
        meta = node.input_metadata() if outs else None
        for i, (nxt, slot) in enumerate(node._next_edges):
            if nxt is None:
                continue
            remaining = deps[nxt] - 1
            deps[nxt] = remaining
            if self.exec_info is not None and not self.should_execute(nxt):
                continue
            g = outs[i] if i < len(outs) else None
            if g is not None and meta is not None:
                g = conform(node, i, g, meta[i])
            self.add_to_buffer(nxt, slot, g)
            if remaining == 0:
                self.push(nxt)

    def run_callbacks(self) -> None:
        cbs = self.callbacks
        i = 0
        while i < len(cbs):  # callbacks may queue more callbacks: drain FIFO
            cbs[i]()
            i += 1


def conform(node: Node, i: int, g: Tensor, meta: Any) -> Tensor:
    """PyTorch's validate_outputs: cast to the input's dtype, reduce broadcast shapes."""
    if meta is None:
        return g
    shape, np_dtype = meta
    if g._data.shape != shape:
        if _expandable(shape, g._data.shape):
            g = g.sum_to_size(shape)  # type: ignore[attr-defined]
        else:
            raise RuntimeError(
                f"Function {node.name()} returned an invalid gradient at index {i} - got "
                f"{list(g._data.shape)} but expected shape compatible with {list(shape)}"
            )
    if g._data.dtype != np_dtype:
        g = g.to(_dtype_of(np_dtype))  # type: ignore[attr-defined]
    return g


def _expandable(shape: tuple, to: tuple) -> bool:
    if len(shape) > len(to):
        return False
    for a, b in zip(reversed(shape), reversed(to)):
        if a != b and a != 1:
            return False
    return True


def _dtype_of(np_dtype: Any) -> Any:
    from hookgrad._dtypes import from_numpy_dtype

    return from_numpy_dtype(np_dtype)


def execute(roots: list, seeds: list, *, create_graph: bool, retain_graph: bool,
            targets: list | None, accumulate: bool) -> list:
    """Run one graph task. `roots`: ``(node, slot)`` edges; `targets`: ``(node, slot, i)``.

    Returns the captured gradients (for ``grad()``; empty for ``backward()``).
    """
    task = GraphTask(create_graph, retain_graph, accumulate)
    if len(roots) == 1:
        root, slot = roots[0]
        task.add_to_buffer(root, slot, seeds[0])
    else:
        root = GraphRoot(tuple(roots), seeds)
    task.count_dependencies(root)
    if targets is not None:
        task.compute_needed(root, targets, accumulate)
    task.push(root)
    prev = STATE.grad_enabled
    STATE.grad_enabled = create_graph
    STATE.graph_task_stack.append(task)
    try:
        task.run()
    finally:
        STATE.graph_task_stack.pop()
        STATE.grad_enabled = prev
    return task.captured


def queue_callback(callback: Any) -> None:
    """Run `callback` when the innermost running backward pass finishes (spec §5.4)."""
    stack = STATE.graph_task_stack
    if not stack:
        raise RuntimeError("Final callbacks can only be installed during backward pass.")
    stack[-1].callbacks.append(callback)


class _ExecutionEngine:
    """Mirrors ``torch.autograd.Variable._execution_engine`` (only ``queue_callback``)."""

    queue_callback = staticmethod(queue_callback)


ENGINE = _ExecutionEngine()

__all__ = ["execute", "queue_callback", "GraphTask", "GraphRoot", "ENGINE"]
