"""Compiled autograd, the operators a captured backward graph calls (spec §10.2).

One operator per autograd node (named after the node, as PyTorch 2.13's compiled-autograd
graphs call ``MulBackward0(...)``), plus ``call_hook``, ``call_accumulate_grad``,
``call_retain_grad``, ``accumulate_grad_buffer`` and the final-callbacks stub. Each does what the
eager engine does at that point (hookgrad/autograd/engine.py, _hook_points.py, _nodes.py), on
the runtime inputs it is given.

NOTE [Rule operations in compiled autograd]
A node operator runs its primitive's VJP rules through the rule plan's callers, picked as the
engine picks them (NOTE [Rule operations]): the array callers when nothing watches the
backward's ops, the tensor callers when a recorder that ``sees_backward`` is on the stack (a
compiler tracing the graph records every primitive the rules run).
"""

from __future__ import annotations

import threading
from typing import Any

import numpy as np

from hookgrad._backend import namespace_of
from hookgrad._config import STATE
from hookgrad._ops._rule_ops import as_array
from hookgrad._ops.complex_ops import DIRECT_COMPLEX_RULES
from hookgrad._tensor import Tensor
from hookgrad.autograd._hook_points import check_replacement, check_tuple
from hookgrad.autograd._nodes import ACCUMULATE_LOCK, accumulate_into, plan_of
from hookgrad.autograd._saved import SavedTensor
from hookgrad.autograd.engine import conform, current_graph_task
from hookgrad.compile.compiled_autograd.ca_capture import PRIMS

__all__ = ["PrimitiveBackward", "ModuleHookBackward", "call_backward", "call_hook",
           "call_accumulate_grad", "call_retain_grad", "accumulate_grad_buffer", "PASSES",
           "PassState", "begin_pass", "node_done", "check_saved", "exec_final_callbacks_stub"]

_make = Tensor._make
_EMPTY: dict = {}


def _fast() -> bool:
    """Arrays for the rules: no graph is built and nothing records the backward's ops."""
    return not STATE.backward_seen and not STATE.grad_enabled


class PrimitiveBackward:
    """The backward of one primitive node: ``op(grads, saved, shapes, scalars) -> grads``.

    Mirrors: the ``torch__dynamo_compiled_autograd_ops_<Node>`` calls of a CA graph.
    """

    def __init__(self, entry: tuple, edges: tuple) -> None:
        _kind, prim_token, node_name, saved, meta, static, names, nout = entry
        self.prim = PRIMS[prim_token]
        self.node_name = node_name
        self.__name__ = node_name.rsplit(":", 1)[-1]
        self.saved_names = tuple(name for name, _ in saved)
        self.dtypes = tuple(None if m is None else m[1] for m in meta)
        self.static = dict(static)
        self.names = names
        self.nout = nout
        self.present = tuple(dst >= 0 for dst, _ in edges)
        self.none_out = (None,) * len(edges)
        self.plan = plan_of(self.prim)
        diff = self.prim.diff_inputs
        self.edge_meta = tuple(range(len(meta))) if len(diff) == len(meta) else diff

    def name(self) -> str:
        return self.node_name

    def __call__(self, grads: list, saved: list, shapes: list, scalars: list) -> tuple:
        present = self.present
        if self.nout == 1:
            grad = grads[0]
            if grad is None:
                return self.none_out
        elif all(g is None for g in grads):
            return self.none_out
        else:
            grad = None
        values = dict(zip(self.saved_names, saved, strict=True)) if saved else _EMPTY
        params = self.static
        if scalars:
            params = dict(params)
            params.update(zip(self.names, scalars, strict=True))
        meta = [None if s is None else (s, dt)
                for s, dt in zip(shapes, self.dtypes, strict=True)]
        plan = self.plan
        callers = plan.array_callers if _fast() else plan.callers
        # NOTE [Complex gradients] (_ops/complex_ops.py): a holomorphic rule runs on conj(grad)
        conj = grad is not None and grad._data.dtype.kind == "c" and \
            self.prim.name not in DIRECT_COMPLEX_RULES
        if conj:
            grad = grad.conj_physical()
        grads = tuple(grads)
        edge_meta = self.edge_meta
        out = []
        for k, call in enumerate(callers):
            if not present[k]:
                out.append(None)
                continue
            g = call(grad, grads, values, params, meta)
            if conj and g is not None and g._data.dtype.kind == "c":
                g = g.conj_physical()
            m = meta[edge_meta[k]]
            if g is not None and m is not None and (g._data.shape != m[0]
                                                    or g._data.dtype != m[1]):
                g = conform(self, k, g, m)
            out.append(g)
        return tuple(out)


class ModuleHookBackward:
    """``BackwardHookFunctionBackward``: identity, missing gradients filled with zeros.

    Mirrors: PyTorch's ``call_backward`` of the ``BackwardHookFunction`` node in a CA graph.
    """

    __name__ = "BackwardHookFunctionBackward"

    def __init__(self, dtypes: tuple) -> None:
        self.dtypes = dtypes

    def __call__(self, grads: list, shapes: list) -> tuple:
        if all(g is not None for g in grads):
            return tuple(grads)
        like = next((g for g in grads if g is not None), None)
        xp = np if like is None else namespace_of(like._data)
        return tuple(_make(xp.zeros(shape, dt)) if g is None else g
                     for g, shape, dt in zip(grads, shapes, self.dtypes, strict=True))


def call_backward(node: Any, grads: list, n_edges: int) -> tuple:
    """Run a node's own backward (a custom ``autograd.Function``'s and other non-primitive
    nodes), conforming its results to the next nodes' metadata as the engine's ``route`` does.

    Mirrors: ``torch._dynamo.external_utils.call_backward``.
    """
    outs = node.apply(tuple(grads))
    meta = node.input_metadata() if outs else None
    res = []
    for i in range(n_edges):
        g = outs[i] if i < len(outs) else None
        if g is not None and meta is not None:
            m = meta[i]
            if m is not None and (g._data.shape != m[0] or g._data.dtype != m[1]):
                g = conform(node, i, g, m)
        res.append(g)
    return tuple(res)


def call_hook(hook: Any, *args: Any, hook_type: str) -> Any:
    """Call a runtime hook object at its point of the pass, validating what it returns.

    Mirrors: ``torch._dynamo.external_utils.call_hook``.
    """
    if hook_type == "tensor_pre_hook":
        (grad,) = args
        new = hook(grad)
        return grad if new is None else check_replacement(hook, grad, new)
    if hook_type == "pre_hook":
        grads = list(args[0])
        ret = hook(tuple(grads))
        return grads if ret is None else check_tuple(hook, grads, ret)
    if hook_type == "post_hook":
        outs, grads = args
        ret = hook(tuple(outs), tuple(grads))
        return tuple(outs) if ret is None else tuple(check_tuple(hook, outs, ret))
    if hook_type == "post_acc_grad_hook":
        var, grad = args
        if grad is None:  # nothing was accumulated: eager skips the hooks too
            return None
        ret = hook(var)
        if ret is not None:
            if isinstance(ret, Tensor):
                raise RuntimeError("Tensor post accumulate grad hooks should return None.")
            raise TypeError(f"expected Variable, but hook returned '{type(ret).__name__}'")
        return None
    if hook_type == "unpack_hook":
        (packed,) = args
        data = hook(packed)
        if not isinstance(data, Tensor):
            raise TypeError("Output of saved tensor unpack_hook expected to be a Tensor but got "
                            f"result of type {type(data).__name__}")
        return data
    raise ValueError(f"unknown hook_type {hook_type!r}")


def call_accumulate_grad(variable: Tensor, grad: Any) -> None:
    """AccumulateGrad: add `grad` into ``variable.grad`` (NOTE [AccumulateGrad]).

    Mirrors: ``torch._dynamo.external_utils.call_accumulate_grad``.
    """
    if grad is None:
        return
    # The graph's local and `held` stand where the engine's input buffer and grads tuple
    # hold the gradient, so accumulate_into's reference count test reads the same
    # (NOTE [Stealing a gradient]): kept only when nothing else can see it.
    held = (grad,)
    with ACCUMULATE_LOCK:
        accumulate_into(variable, grad)
    del held


def call_retain_grad(tensor: Tensor, grad: Any) -> None:
    """``retain_grad``: store (or add to) the non-leaf's ``.grad`` (hooks.md §1.3 step 2).

    Mirrors: the ``call_cpp_tensor_pre_hooks`` step of a PyTorch CA graph (retain_grad's hook).
    """
    if grad is None:
        return
    tensor._grad = grad.clone() if tensor._grad is None else tensor._grad + grad


def accumulate_grad_buffer(old: Any, new: Any) -> Any:
    """Sum two gradients arriving at one input slot.

    Mirrors: the ``add`` a PyTorch CA graph records for ``InputBuffer::accumulate``.
    """
    if old is None:
        return new
    if new is None:
        return old
    if _fast():  # same dtype and shape (both were conformed to the slot's metadata)
        return _make(as_array(old._data + new._data))
    return old + new


class _Passes(threading.local):
    def __init__(self) -> None:
        self.stack: list = []  # per running pass: (its nodes, whether they are freed as they run)


PASSES = _Passes()


class PassState:
    """What the graph's per-node bookkeeping needs (see `node_done`)."""

    __slots__ = ("pollers", "nodes", "inputs", "steal", "order")

    def __init__(self, pollers: list, nodes: Any, inputs: list, steal: bool,
                 order: Any = None) -> None:
        self.pollers, self.nodes, self.inputs, self.steal = pollers, nodes, inputs, steal
        self.order = order  # the pass's nodes in execution order (None: not a real pass)


def begin_pass(inputs: list) -> PassState:
    """The pass's pollers (``poll_between_nodes`` appends to the list during the pass) and the
    nodes to free as they run (None under ``retain_graph``, or outside a compiled-autograd
    pass). A compiler tracing the graph builds its guards from the inputs after the call, so
    they are left in place then."""
    task = current_graph_task()
    stack = PASSES.stack
    order, free = stack[-1] if stack else (None, False)
    return PassState(task.pollers if task is not None else [], order if free else None, inputs,
                     not STATE.backward_seen, order)


def check_saved(state: PassState, pos: int) -> None:
    """NOTE [Saved values modified by hooks]: the capture read node `pos`'s saved tensors
    before any hook ran; a hook that ran since (a post-accumulate hook, a tensor hook) may have
    modified one in place. Eager's engine checks versions when the node unpacks them, so the
    check is repeated here, at the node's point, with eager's error. Emitted only after the
    graph's first hook call (nothing else can write to a saved tensor during the pass)."""
    order = state.order
    if order is None:
        return
    node = order[pos]
    for s in node._saved.values():
        for one in s if type(s) is tuple else (s,):
            if type(one) is SavedTensor and one._unpack is None:
                one.unpack(node)  # raises eager's version-counter error


def node_done(state: PassState, pos: int, used: tuple) -> None:
    """After each node, as the engine: free its saved values (and drop the runtime inputs that
    held them, so memory is released as the pass goes), then call the pollers."""
    nodes = state.nodes
    if nodes is not None:
        nodes[pos].release_saved()
        if state.steal:
            inputs = state.inputs
            for i in used:
                inputs[i] = None
    if state.pollers:
        for poll in state.pollers:
            poll()


def exec_final_callbacks_stub() -> None:
    """Run the callbacks queued during the pass (``queue_callback``), in FIFO order.

    Mirrors: ``torch._dynamo.external_utils._exec_final_callbacks_stub``.
    """
    task = current_graph_task()
    if task is not None:
        task.run_callbacks()
