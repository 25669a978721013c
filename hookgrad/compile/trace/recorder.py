"""`TraceRecorder`: turns the primitives `bind` runs during a trace into graph nodes.

It sits on the core's one door (the recorder protocol of `hookgrad._config`): every primitive
call reports ``(prim, inputs, params, outputs)``. A tensor met as an input is either already a
graph value (an earlier output), a *sourced* tensor (a graph input: a placeholder with its
source), or a fresh non-differentiable constant (a wrapped Python scalar: baked into the graph).
Anything else is a tensor made outside `bind` from graph values (a graph break).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from hookgrad._config import STATE
from hookgrad._dispatch import bind, bind_inplace
from hookgrad._tensor import Tensor
from hookgrad.compile.core.graph import Graph, Node, placeholder
from hookgrad.compile.trace.value_shapes import value_shaped
from hookgrad.compile.core.sources import Source, SourceIndex


def tensor_meta(t: Tensor) -> tuple:
    """What a tensor input is guarded on (spec §6.1 TENSOR_MATCH, static shapes)."""
    return (type(t), t._data.dtype, t._requires_grad, t._data.shape)


def tensor_layout(t: Tensor) -> tuple:
    """Byte strides and C-contiguity of a tensor input (guarded with `tensor_meta`)."""
    data = t._data
    return data.strides, bool(data.flags.c_contiguous)

__all__ = ["TraceRecorder", "PrimCall", "InplaceCall", "getitem", "UntrackedTensor",
           "tensor_meta", "tensor_layout"]


class UntrackedTensor(Exception):
    """A tensor reached the graph that the tracer cannot source (internal graph-break cause)."""


class PrimCall:
    """Node target that re-runs one primitive through `bind` (so autograd records it)."""

    __slots__ = ("prim", "params", "cast", "__name__")

    def __init__(self, prim: Any, params: dict, cast: Any) -> None:
        self.prim, self.params, self.cast = prim, params, cast
        self.__name__ = prim.name

    def __call__(self, *inputs: Tensor) -> Any:
        return bind(self.prim, inputs, self.params, self.cast)


class InplaceCall:
    """Node target for an in-place primitive: ``target`` first, then the op's inputs."""

    __slots__ = ("prim", "params", "cast", "__name__")

    def __init__(self, prim: Any, params: dict, cast: Any) -> None:
        self.prim, self.params, self.cast = prim, params, cast
        self.__name__ = prim.name + "_"

    def __call__(self, target: Tensor, *inputs: Tensor) -> Tensor:
        return bind_inplace(self.prim, target, inputs, self.params, self.cast)


def getitem(seq: Any, i: int) -> Any:
    """Node target picking one output of a multi-output op."""
    return seq[i]


class TraceRecorder:
    """Records one graph; see the module docstring for how inputs are classified."""

    sees_backward = True  # compiled-autograd traces record the ops of backward rules

    def __init__(self, graph: Graph, index: SourceIndex | None) -> None:
        self.graph = graph
        self.index = index
        self.values: dict[int, Node] = {}
        self._multi: dict[int, tuple[Node, int]] = {}
        self.keep: list[Any] = []  # keeps traced tensors alive so ids stay unique
        self.placeholders: list[tuple[Node, Source, tuple]] = []
        self.constants: dict[str, Tensor] = {}
        # the user-level calls that made the nodes (`trace.user_calls`, read by `to_fx`)
        self.user_calls: list[Any] = []
        self.factory_calls: dict[int, Any] = {}  # id of a baked constant -> (call, constant)
        self.free: dict[int, Node] = {}  # sub-graphs: outer tensors -> placeholder (freevars)
        self.outer: TraceRecorder | None = None
        self.free_order: list[Tensor] = []
        self.suspended = 0
        # compiled-autograd graphs: saved tensors and seeds are captured as constants
        self.lenient = False
        self.on_break: Any = None  # called with the reason instead of raising into user code
        self.written: set[int] = set()  # tensors filled outside primitives (random, copies)
        # saved-tensor hooks entered inside the region would pack/unpack on the trace call
        # only (a per-call action the graph cannot replay): a graph break (NOTE in `record`)
        self.hooks_depth = len(STATE.saved_hooks_stack)
        self.grad_mode = STATE.grad_enabled  # nodes replay in the caller's grad mode

    # -------------------------------------------------------------- values
    def bind_outputs(self, node: Node, outs: tuple) -> None:
        """`outs` are the elements of `node`'s tuple result (picked lazily by ``getitem``)."""
        for j, out in enumerate(outs):
            self._multi[id(out)] = (node, j)
            self.keep.append(out)

    def is_intermediate(self, t: Tensor) -> bool:
        """Produced inside the region (not a graph input or a baked constant)."""
        node = self.values.get(id(t))
        if node is None:
            return id(t) in self._multi
        return node.op == "call_function"

    def is_traced(self, t: Tensor) -> bool:
        return id(t) in self.values or id(t) in self._multi

    def bind_value(self, t: Tensor, node: Node) -> None:
        node.meta["shape"] = t._data.shape
        node.meta["dtype"] = t.dtype  # (with the shape: the fx graph's example values)
        self.values[id(t)] = node
        self._multi.pop(id(t), None)
        self.keep.append(t)

    def node_of(self, t: Tensor) -> Node:
        key = id(t)
        node = self.values.get(key)
        if node is not None:
            return node
        multi = self._multi.pop(key, None)
        if multi is not None:
            node = self.graph.call_function(getitem, (multi[0], multi[1]), name="getitem")
            self.bind_value(t, node)
            return node
        return self._new_input(t)

    def _new_input(self, t: Tensor) -> Node:
        if self.outer is not None and (self.outer.is_traced(t) or self.outer.sourced(t)):
            node = placeholder(self.graph, f"free_{len(self.free_order)}")
            self.free_order.append(t)
            self.bind_value(t, node)
            return node
        source = self.index.source_of(t) if self.index is not None else None
        if source is not None:
            node = placeholder(self.graph, source.name())
            node.meta["input_type"] = type(t)  # (the fx graph's placeholder annotation)
            node.meta["layout"] = tensor_layout(t)  # (guarded with the metadata)
            self.placeholders.append((node, source, tensor_meta(t)))
            self.bind_value(t, node)
            return node
        if not self.lenient and (t._requires_grad or id(t) in self.written
                                 or self._aliases_graph_value(t)):
            raise UntrackedTensor("a tensor produced outside the traced operations reached the "
                                  "graph (untracked tensor)")
        name = f"_tensor_constant{len(self.constants)}"
        self.constants[name] = t
        node = self.graph.get_attr(name)
        self.bind_value(t, node)
        return node

    def sourced(self, t: Tensor) -> bool:
        return self.index is not None and self.index.source_of(t) is not None

    def _aliases_graph_value(self, t: Tensor) -> bool:
        """Soundness backstop: a tensor made outside `bind` that shares memory with a graph
        value or an input holds this call's values; baked as a constant it would be stale on
        the next call, so it breaks the graph instead."""
        data = t._data
        if data.size == 0:
            return False
        others = [o for o in self.keep if isinstance(o, Tensor)]
        if self.index is not None:
            others += [v for _s, v in self.index.by_id.values() if isinstance(v, Tensor)]
        for other in others:
            if other is not t and np.may_share_memory(other._data, data):
                return True
        return False

    def _context_changed(self) -> bool:
        """An op under a context entered inside the region (saved-tensor hooks, another grad
        mode) cannot be replayed by a graph that runs in the caller's context: graph break."""
        if self.lenient:
            return False
        if len(STATE.saved_hooks_stack) != self.hooks_depth:
            why = "an op ran under saved_tensors_hooks entered inside the compiled region"
        elif STATE.grad_enabled != self.grad_mode:
            why = "an op ran under a grad mode set inside the compiled region"
        else:
            return False
        self._untracked(UntrackedTensor(why))
        return True

    # -------------------------------------------------------------- recorder protocol
    def record(self, prim: Any, inputs: tuple, params: dict, outputs: tuple,
               cast: Any = None) -> None:
        if self.suspended:
            return
        if self._context_changed():
            return
        why = None if self.lenient else value_shaped(prim, inputs)
        if why is not None:  # a count the user's Python may read would be baked in
            self._untracked(UntrackedTensor(why))
            return
        try:
            args = tuple(self.node_of(t) for t in inputs)
        except UntrackedTensor as e:
            self._untracked(e)
            return
        node = self.graph.call_function(PrimCall(prim, dict(params), cast), args, name=prim.name)
        if prim.num_outputs == 1:
            self.bind_value(outputs[0], node)
        else:
            for j, out in enumerate(outputs):
                self._multi[id(out)] = (node, j)
                self.keep.append(out)

    def record_inplace(self, prim: Any, inputs: tuple, params: dict, out: Tensor,
                       target: Tensor, cast: Any = None) -> None:
        if self.suspended:
            return
        if self._context_changed():
            return
        try:
            args = (self.node_of(target),) + tuple(self.node_of(t) for t in inputs)
        except UntrackedTensor as e:
            self._untracked(e)
            return
        node = self.graph.call_function(InplaceCall(prim, dict(params), cast), args,
                                        name=prim.name + "_")
        self.bind_value(out, node)
        self._pending_target = (target, node)

    def rebase(self, target: Tensor, out: Tensor) -> None:
        if self.suspended:
            return
        pending = getattr(self, "_pending_target", None)
        if pending is not None and pending[0] is target:
            self.bind_value(target, pending[1])
            self._pending_target = None

    def record_write(self, target: Tensor) -> None:
        if self.suspended or self.lenient:
            return
        if self.is_traced(target) or self.sourced(target):
            self._untracked(UntrackedTensor("tensor data written outside a primitive inside "
                                            "the region (a random fill or a direct write)"))
        else:
            self.written.add(id(target))
            self.keep.append(target)

    def record_function(self, fn_cls: Any, inputs: tuple, outputs: tuple) -> None:
        if self.suspended or self.lenient:
            return
        name = getattr(fn_cls, "__name__", "Function")
        self._untracked(UntrackedTensor(f"custom autograd.Function {name} inside the region "
                                        "(module backward hooks or a user Function)"))

    def _untracked(self, e: UntrackedTensor) -> None:
        if self.on_break is None:
            raise e  # a speculative hook body: its caller turns this into a failed speculation
        self.on_break(str(e))

    # -------------------------------------------------------------- composites
    def record_composite(self, fn: Any, args: tuple, kwargs: dict, result: Any) -> None:
        """One node for a hookgrad function whose inner primitives were not recorded."""
        def conv(v: Any) -> Any:
            if isinstance(v, Tensor):
                return self.node_of(v)
            if isinstance(v, (tuple, list)):
                return type(v)(conv(x) for x in v)
            return v
        node = self.graph.call_function(fn, conv(tuple(args)), name=fn.__name__,
                                        kwargs={k: conv(v) for k, v in kwargs.items()})
        if isinstance(result, Tensor):
            self.bind_value(result, node)
        elif isinstance(result, tuple):
            for j, out in enumerate(result):
                if isinstance(out, Tensor):
                    self._multi[id(out)] = (node, j)
                    self.keep.append(out)
