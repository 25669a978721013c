"""The backward engine: one `GraphTask` per ``backward()``/``grad()`` call (spec §1.2).

NOTE [Engine order]
Dependencies are counted over every node reachable from the roots; the ready queue is a binary
heap on the sequence number (largest first, AccumulateGrad = 2**64-1). Ties are broken exactly
like PyTorch's ``std::priority_queue``: `heapq`'s push and pop are the same sift algorithms as
libstdc++'s ``push_heap``/``pop_heap``, so items compare on the key alone (no insertion counter),
which reproduces PyTorch's order for nodes of equal priority (e.g. two leaves fed by one node).
With ``inputs=``, a node executes only when a path leads from it to a requested input; a
requested input of ``grad()`` is a *capture point* (spec §5.3).

NOTE [Graph task stack]
``STATE.graph_task_stack`` holds the running passes, innermost last. A ``backward()`` called
from inside a hook runs a nested task to completion (re-entrant backward, spec §5.5);
``queue_callback`` and per-pass hook state (multi-grad hooks, ``current_graph_task_id``) always
refer to the innermost task, so a nested pass drains its own callbacks before the outer hook
continues. Grad mode inside a pass equals ``create_graph`` (spec §1.6) and is restored after.
The no-hooks fast path: a node without hooks costs one ``_has_hooks()`` check; nothing else in
the loop looks at hook tables.

NOTE [Plain pass]
`GraphTask.run` is one loop that runs a node and routes its outputs into the next nodes'
buffers inline (no call per node for either in the common case: no hooks, no ``inputs=``
pruning), because it runs once per node of every backward and a Python call costs about as
much as a step of the loop. When exactly one node becomes ready and the ready heap is empty,
pushing it and popping the heap would hand back that same node, so it runs next without the
heap (a chain of single-input nodes never touches it).
"""

from __future__ import annotations

import heapq
import itertools
import sys
from typing import Any

from hookgrad._backend import QUIET_RESET, QUIET_SET, QUIET_STATE
from hookgrad._config import GLOBAL, STATE, set_grad_mode
from hookgrad._ops._rule_ops import ARRAY_OPS, TENSOR_OPS
from hookgrad._tensor import Tensor
from hookgrad.autograd._hook_points import (
    call_node_post_hooks,
    call_node_pre_hooks,
    call_tensor_pre_hooks,
)
from hookgrad.autograd._node import Node
from hookgrad.autograd.anomaly_mode import check_nan_outputs



def _list_input(node: Node) -> bool:
    """Whether `node`'s inputs are one tensor list (``cat``/``stack``), whose gradients
    PyTorch's generated code computes together when any of them is needed."""
    prim = getattr(node, "_prim", None)
    return prim is not None and prim.inputs[:1] == ("tensors0",)



class ReadyNode:
    """An entry of the ready heap, ordered as NOTE [Engine order] says (also used by compiled
    autograd's capture, which replays this schedule)."""

    __slots__ = ("key", "node")

    def __init__(self, node: Node) -> None:
        self.key = -node._seq
        self.node = node

    def __lt__(self, other: ReadyNode) -> bool:
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
        "deps", "exec_info", "reached", "captures", "captured", "buffers", "heap", "callbacks",
        "create_graph", "retain_graph", "is_backward", "task_id", "hook_state", "pollers",
        "rule_ops",
    )
    _ids = itertools.count()  # next() on a count is atomic: threads get distinct ids

    def __init__(self, create_graph: bool, retain_graph: bool, is_backward: bool) -> None:
        self.task_id = next(GraphTask._ids)
        self.hook_state: dict | None = None  # per-pass state of hooks (multi-grad hooks)
        self.create_graph = create_graph
        # NOTE [Rule operations] (_ops/_rule_ops.py): decided once for the pass. Arrays when no
        # graph is built and no recorder on this thread's stack watches the backward's ops.
        no_graph = not create_graph and not STATE.backward_seen
        self.rule_ops = ARRAY_OPS if no_graph else TENSOR_OPS
        self.retain_graph = retain_graph
        self.is_backward = is_backward
        self.deps: dict[Node, int] = {}
        self.exec_info: dict[Node, bool] | None = None  # None: every node executes
        self.reached: set = set()  # with exec_info: nodes that execute or capture
        self.captures: dict[Node, list] = {}
        self.captured: list = []
        self.buffers: dict[Node, list] = {}
        self.heap: list[ReadyNode] = []
        self.callbacks: list = []
        self.pollers: list = []  # called after every node (`poll_between_nodes`)

    # ------------------------------------------------------------------ graph analysis
    def count_dependencies(self, root: Node) -> None:
        count_dependencies(root, self.deps)

    def compute_needed(self, root: Node, targets: list, accumulate: bool) -> None:
        """Count dependencies and mark the nodes on a path to a target, in one walk.

        `count_dependencies` plus the ``inputs=`` analysis: an iterative post-order walk (no
        recursion) that counts each edge when its node is first reached and decides whether
        the node leads to a target once all its next nodes are decided (the graph is acyclic,
        so they are).
        """
        captures = self.captures
        if not accumulate:
            for node, slot, idx in targets:
                captures.setdefault(node, []).append((slot, idx))
        self.captured = [None] * len(targets)
        target_nodes = {node for node, _, _ in targets} if accumulate else set()
        deps = self.deps
        info: dict[Node, bool] = {}
        done: set = set()
        stack: list = [(root, False)]
        while stack:
            node, expanded = stack.pop()
            if expanded:
                hit = node in target_nodes
                if not hit:
                    for nxt, _ in node._next_edges:
                        if nxt is not None and (info.get(nxt) or nxt in captures):
                            hit = True
                            break
                info[node] = hit
                continue
            if node in done:
                continue
            done.add(node)
            stack.append((node, True))
            for nxt, _ in node._next_edges:
                if nxt is not None:
                    deps[nxt] = deps.get(nxt, 0) + 1
                    if nxt not in done:
                        stack.append((nxt, False))
        self.exec_info = info
        self.reached = {node for node, hit in info.items() if hit} | set(captures)

    def should_execute(self, node: Node) -> bool:
        return self.exec_info is None or node in self.reached

    # ------------------------------------------------------------------ running
    def push(self, node: Node) -> None:
        heapq.heappush(self.heap, ReadyNode(node))

    def add_to_buffer(self, node: Node, slot: int, grad: Any) -> None:
        buf = self.buffers.get(node)
        if buf is None:
            buf = self.buffers[node] = [None] * node._num_slots()
        if grad is None:
            return
        old = buf[slot]
        buf[slot] = grad if old is None else self.accumulate(old, grad)

    def accumulate(self, old: Tensor, new: Tensor) -> Tensor:
        """Sum two gradients for one input slot (PyTorch's ``InputBuffer::accumulate``).

        Adds in place when nothing but the buffer can see `old` (see `_engine_owned`) and no
        graph is being built; otherwise out of place, recorded under ``create_graph``.
        """
        if not self.create_graph and _engine_owned(old, new):
            token = QUIET_SET(QUIET_STATE)  # inf + -inf in a summed gradient: nan, no NumPy
            try:  # RuntimeWarning (NOTE [Quiet impls]); inline, as it runs per summed edge
                old._data += new._data
            finally:
                QUIET_RESET(token)
            return old
        return old + new  # type: ignore[operator]

    def run(self) -> None:
        """Execute the ready nodes in NOTE [Engine order], routing each node's outputs into
        the next nodes' buffers inline (NOTE [Plain pass]), then drain the callbacks."""
        heap, buffers, deps = self.heap, self.buffers, self.deps
        pop = buffers.pop
        plain = self.exec_info is None  # no ``inputs=`` pruning and no captures
        release = not self.retain_graph
        check_nan = GLOBAL.anomaly and GLOBAL.anomaly_check_nan
        pollers = self.pollers  # the list itself: pollers added during the pass are seen
        while heap:
            node: Node | None = heapq.heappop(heap).node
            while node is not None:
                grads = pop(node, None) or [None] * node._num_slots()
                if not plain:
                    if not self._capture(node, grads):
                        break
                    outs = self.execute(node, grads)
                elif node._has_hooks():
                    outs = self._run_hooked(node, grads, None)
                else:  # `execute` without hooks or pruning, inline: the common case per node
                    outs = node.apply(tuple(grads))
                    if release:
                        node.release_saved()
                if check_nan:
                    check_nan_outputs(node.name(), outs)
                meta = node.input_metadata() if outs else None
                n_outs = len(outs)
                ready = None
                i = -1
                for nxt, slot in node._next_edges:
                    i += 1
                    if nxt is None:
                        continue
                    remaining = deps[nxt] - 1
                    deps[nxt] = remaining
                    if not plain and nxt not in self.reached:
                        continue
                    g = outs[i] if i < n_outs else None
                    buf = buffers.get(nxt)  # `add_to_buffer`, inline: once per graph edge
                    if buf is None:
                        buf = buffers[nxt] = [None] * nxt._num_slots()
                    if g is not None:
                        if meta is not None:
                            m = meta[i]
                            if m is not None and (g._data.shape != m[0]
                                                  or g._data.dtype != m[1]):
                                g = conform(node, i, g, m)
                        old = buf[slot]
                        buf[slot] = g if old is None else self.accumulate(old, g)
                    if remaining == 0:
                        if ready is not None:
                            self.push(ready)
                        ready = nxt
                if ready is not None and heap:  # else it runs next, without the heap
                    self.push(ready)
                    ready = None
                node = ready
                for poll in pollers:
                    poll()
                # Routed: drop the references, so AccumulateGrad can tell that nothing else
                # holds a gradient it may keep (NOTE [Stealing a gradient] in _nodes.py).
                outs = g = old = None
        self.run_callbacks()

    def _capture(self, node: Node, grads: list) -> bool:
        """Record captures for ``grad()``; False when the node must not execute."""
        needed = self.exec_info.get(node, False)  # type: ignore[union-attr]
        caps = self.captures.get(node) if self.captures else None
        if not needed:
            grads = call_tensor_pre_hooks(node, grads)
        if caps:
            for slot, idx in caps:
                self.captured[idx] = grads[slot]
        return needed

    def execute(self, node: Node, grads: list) -> tuple:
        mask = None
        if self.exec_info is not None:
            # which next edges lead somewhere; None when all do (the rules skip nothing)
            reached = self.reached
            for n, _ in node._next_edges:
                if n is not None and n not in reached:
                    mask = tuple([n is not None and n in reached for n, _ in node._next_edges])
                    break
            if mask is not None and _list_input(node) and any(mask):
                mask = None  # PyTorch asks once for a whole TensorList input (cat, stack)
        if node._has_hooks():
            return self._run_hooked(node, grads, mask)
        outs = node.apply(tuple(grads), mask)
        if not self.retain_graph:
            node.release_saved()
        return outs

    def _run_hooked(self, node: Node, grads: list, mask: tuple | None) -> tuple:
        """`execute` for a node with hooks (NOTE [Per-node hook order])."""
        grads = call_tensor_pre_hooks(node, grads)
        if node._pre_hooks:
            grads = call_node_pre_hooks(node, grads)
        outs = node.apply(tuple(grads), mask)
        if node._post_hooks:
            # PyTorch validates (casts) a node's outputs before its post hooks see them
            outs = call_node_post_hooks(node, _conformed(node, outs), grads)
        if not self.retain_graph:
            node.release_saved()
        return outs

    def run_callbacks(self) -> None:
        cbs = self.callbacks
        i = 0
        while i < len(cbs):  # callbacks may queue more callbacks: drain FIFO
            cbs[i]()
            i += 1


def _conformed(node: Node, outs: tuple) -> tuple:
    """`outs` cast/reshaped to the metadata of the inputs they are gradients of."""
    meta = node.input_metadata() if outs else None
    if meta is None:
        return outs
    fixed = list(outs)
    for i, g in enumerate(outs):
        m = meta[i] if i < len(meta) else None
        if g is not None and m is not None and (g._data.shape != m[0] or g._data.dtype != m[1]):
            fixed[i] = conform(node, i, g, m)
    return tuple(fixed)


def count_dependencies(root: Node, deps: dict) -> dict:
    """Count, into `deps`, the edges into every node reachable from `root`; returns `deps`.

    (Also the first step of compiled autograd's capture, which replays this engine's order.)
    """
    stack = [root]
    while stack:  # the graph is acyclic: a node is new exactly when it has no count yet
        for nxt, _ in stack.pop()._next_edges:
            if nxt is None:
                continue
            count = deps.get(nxt)
            if count is None:
                deps[nxt] = 1
                stack.append(nxt)
            else:
                deps[nxt] = count + 1
    return deps


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
        if g._data.dtype.kind == "c" and np_dtype.kind != "c":
            g = g.real  # a real input's gradient is the real part (PyTorch's validate_outputs)
        if g._data.dtype != np_dtype:
            g = g.to(_dtype_of(np_dtype))  # type: ignore[attr-defined]
    return g


def _engine_owned(old: Tensor, new: Tensor) -> bool:
    """Whether `old` may take `new` in place: same layout, and only the engine can see it.

    Reference counts stand in for PyTorch's ``use_count() == 1`` test. Called only from
    `GraphTask.accumulate` (by ``route`` or ``add_to_buffer``), `old` is referenced exactly five
    times when nothing else holds it: its buffer slot, the locals of the caller, ``accumulate``
    and this function, and getrefcount's argument; its array three times: ``old._data``, the
    local ``data`` and the argument. A gradient a hook kept, a saved tensor, one tensor routed
    to two slots, or an array shared with another tensor all raise a count, so they are added
    out of place.
    """
    data = old._data
    return (
        old._grad_fn is None
        and old.__class__ is new.__class__  # a vmap-batched gradient is never added in place
        and data.base is None
        and data.shape == new._data.shape
        and data.dtype == new._data.dtype
        and sys.getrefcount(old) <= 5
        and sys.getrefcount(data) <= 3
        and data.flags.writeable
    )


def _expandable(shape: tuple, to: tuple) -> bool:
    if len(shape) > len(to):
        return False
    return all(a in (b, 1) for a, b in zip(reversed(shape), reversed(to), strict=False))


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
    if targets is None:
        task.count_dependencies(root)
    else:
        task.compute_needed(root, targets, accumulate)
    task.push(root)
    prev = STATE.grad_enabled
    set_grad_mode(create_graph)
    STATE.graph_task_stack.append(task)
    try:
        task.run()
    finally:
        STATE.graph_task_stack.pop()
        set_grad_mode(prev)
    return task.captured


def current_graph_task() -> GraphTask | None:
    """The innermost running backward pass, or None."""
    stack = STATE.graph_task_stack
    return stack[-1] if stack else None


def current_graph_task_id() -> int:
    """Id of the innermost running backward pass, -1 outside backward.

    Mirrors: ``torch._C._current_graph_task_id``.
    """
    stack = STATE.graph_task_stack
    return stack[-1].task_id if stack else -1


def will_engine_execute_node(node: Node) -> bool:
    """Whether the running pass will execute (or capture at) `node` (spec §6.1).

    Mirrors: ``torch._C._will_engine_execute_node``, including its error for a leaf that is a
    capture point of ``autograd.grad`` and the fact that a single root's own node is not part
    of "the graph" (only nodes reached through edges are).
    """
    stack = STATE.graph_task_stack
    if not stack:
        raise RuntimeError(
            "_will_engine_execute_node should only be called during the backward pass"
        )
    task = stack[-1]
    if node not in task.deps:
        return False
    if task.exec_info is None:
        return True
    if not task.should_execute(node):
        return False
    if node in task.captures and all(n is None for n, _ in node._next_edges):
        raise RuntimeError(
            "A leaf node was passed to _will_engine_execute_node but we are currently running "
            "autograd.grad(). This is currently not supported."
        )
    return True


def poll_between_nodes(poller: Any) -> None:
    """Call ``poller()`` after every node the innermost running backward pass executes.

    For work that must make progress while backward runs, without a thread of its own: DDP
    advances its non-blocking collectives this way (distributed.md §11). The poller is dropped
    when that pass finishes.

    Raises:
        RuntimeError: When no backward pass is running.
    """
    stack = STATE.graph_task_stack
    if not stack:
        raise RuntimeError("poll_between_nodes can only be called during the backward pass.")
    stack[-1].pollers.append(poller)


def queue_callback(callback: Any) -> None:
    """Run ``callback() -> Any`` when the innermost running backward pass finishes (spec §5.4).

    Callbacks run after every node of that pass (so after all accumulation and post-accumulate
    hooks), before ``backward()``/``grad()`` returns, in FIFO order; callbacks queued by a
    callback run in the same drain. A nested (re-entrant) backward pass drains its own queue.
    The return value is ignored; an exception propagates out of ``backward()``.

    Raises:
        RuntimeError: When no backward pass is running.

    Mirrors: ``torch.autograd.Variable._execution_engine.queue_callback``.
    """
    stack = STATE.graph_task_stack
    if not stack:
        raise RuntimeError("Final callbacks can only be installed during backward pass.")
    stack[-1].callbacks.append(callback)


class _ExecutionEngine:
    """Mirrors ``torch.autograd.Variable._execution_engine`` (only ``queue_callback``)."""

    queue_callback = staticmethod(queue_callback)


ENGINE = _ExecutionEngine()

__all__ = [
    "ReadyNode", "count_dependencies", "execute", "queue_callback", "poll_between_nodes",
    "GraphTask", "GraphRoot", "ENGINE", "current_graph_task_id", "current_graph_task",
    "will_engine_execute_node",
]
