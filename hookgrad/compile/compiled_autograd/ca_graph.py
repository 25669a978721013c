"""Compiled autograd, step 2: the backward graph built from a capture key (spec §10.2).

`build_graph(key)` emits, node by node in the eager engine's order, what the engine would do:
the hook calls, the node's backward operator, the routing of its outputs into the next nodes'
input buffers (an ``accumulate_grad_buffer`` add where two gradients meet), ``node_done``
(free the node's saved values, call the pass's pollers), and at the end the final-callbacks
stub. The runtime inputs arrive through five placeholders, as in PyTorch:
``inputs`` (seeds, saved tensors, retained tensors, leaves), ``sizes``, ``scalars``, ``hooks``
and ``packed_data`` (values packed by saved-tensor hooks); they are read in the order
`ca_capture` collected them (NOTE [Compiled autograd key]).

For ``y = x * x; y.register_hook(h); y.sum().backward()`` with a post-accumulate hook on ``x``
the graph's code (``hookgrad.fx``'s emitter: each value dropped after its last use) reads, with
the ``ca_ops`` globals shortened and the drops left out::

    getitem = inputs[0]                                         # the seed
    pass_state = begin_pass(inputs)
    getitem_1 = sizes[0]
    sum_backward0 = SumBackward0([getitem], [], [(getitem_1,)], [])
    getitem_2 = sum_backward0[0]
    node_done = node_done(pass_state, 0, ())
    getitem_3 = hooks[0]
    call_hook = call_hook(getitem_3, getitem_2, hook_type = 'tensor_pre_hook')
    ...
    mul_backward0 = MulBackward0([call_hook], [getitem_4, getitem_5], [...], [])
    getitem_8 = mul_backward0[0]
    getitem_9 = mul_backward0[1]
    accumulate_grad_buffer = accumulate_grad_buffer(getitem_8, getitem_9)
    ...
    call_accumulate_grad = call_accumulate_grad(getitem_10, accumulate_grad_buffer)
    call_hook_1 = call_hook(getitem_11, getitem_10, accumulate_grad_buffer,
                            hook_type = 'post_acc_grad_hook')
    ...
    _exec_final_callbacks_stub = exec_final_callbacks_stub()
    return []
"""

from __future__ import annotations

import operator
from typing import Any

from hookgrad.compile.compiled_autograd import ca_ops
from hookgrad.compile.core.graph import Graph, GraphModule

__all__ = ["CompiledAutogradGraph", "build_graph"]

PLACEHOLDERS = ("inputs", "sizes", "scalars", "hooks", "packed_data")


class _Emitter:
    """Graph under construction plus the read positions in each runtime-input list."""

    def __init__(self) -> None:
        self.g = Graph()
        self.ph = {name: self.g.placeholder(name) for name in PLACEHOLDERS}
        self.pos = dict.fromkeys(PLACEHOLDERS, 0)

    def take(self, which: str) -> Any:
        i = self.pos[which]
        self.pos[which] = i + 1
        return self.g.call_function(operator.getitem, (self.ph[which], i), name="getitem")

    def shape(self, rank: int) -> tuple:
        return tuple(self.take("sizes") for _ in range(rank))

    def pick(self, value: Any, n: int) -> list:
        return [self.g.call_function(operator.getitem, (value, j), name="getitem")
                for j in range(n)]

    def hook(self, args: tuple, hook_type: str) -> Any:
        return self.g.call_function(ca_ops.call_hook, (self.take("hooks"), *args),
                                    name="call_hook", kwargs={"hook_type": hook_type})


def _saved_value(em: _Emitter, layout: Any) -> Any:
    if layout == "none":
        return None
    if layout == "tensor":
        return em.take("inputs")
    if layout == "packed":
        return em.hook((em.take("packed_data"),), "unpack_hook")
    return tuple(_saved_value(em, x) for x in layout)


def _node_body(em: _Emitter, body: tuple, edges: tuple, grads: list, seeds: list) -> list:
    """The node's own computation; returns its outputs, one per edge (or fewer)."""
    kind = body[0]
    g = em.g
    if kind == "prim":
        saved = [_saved_value(em, layout) for _name, layout in body[3]]
        shapes = [None if m is None else em.shape(m[0]) for m in body[4]]
        scalars = [em.take("scalars") for _ in body[6]]
        op = ca_ops.PrimitiveBackward(body, edges)
        out = g.call_function(op, (list(grads), saved, shapes, scalars),
                              name=_snake(op.__name__))
        return em.pick(out, len(edges))
    if kind == "leaf":
        var = em.take("inputs")
        g.call_function(ca_ops.call_accumulate_grad, (var, grads[0]),
                        name="call_accumulate_grad")
        for _ in range(body[4]):
            em.hook((var, grads[0]), "post_acc_grad_hook")
        return []
    if kind == "bwhook":
        shapes = [em.shape(rank) for rank, _dt in body[1]]
        op = ca_ops.ModuleHookBackward(tuple(dt for _rank, dt in body[1]))
        out = g.call_function(op, (list(grads), shapes), name="backward_hook_function_backward")
        return em.pick(out, len(grads))
    if kind == "node":
        out = g.call_function(ca_ops.call_backward, (em.take("hooks"), list(grads), len(edges)),
                              name="call_backward")
        return em.pick(out, len(edges))
    return list(seeds)  # the graph root hands the seeds to its edges


def _snake(name: str) -> str:
    out = [("_" + c.lower()) if c.isupper() and i else c.lower() for i, c in enumerate(name)]
    return "".join(out)


def build_graph(key: tuple) -> Graph:
    """The backward graph of capture `key` (see the module docstring)."""
    em = _Emitter()
    (root_slot, seed_none), entries = key
    n_seeds = 1 if root_slot is not None else len(seed_none)
    seeds = [em.take("inputs") for _ in range(n_seeds)]
    state = em.g.call_function(ca_ops.begin_pass, (em.ph["inputs"],), name="pass_state")
    buffers: dict[int, list] = {}
    if root_slot is not None:
        buffers[0] = [None] * entries[0][4]
        buffers[0][root_slot] = seeds[0]
    for i, (body, (groups, retain, n_pre), n_post, edges, n_slots) in enumerate(entries):
        grads = buffers.pop(i, None) or [None] * n_slots
        for slot, n in groups:
            for _ in range(n):
                grads[slot] = em.hook((grads[slot],), "tensor_pre_hook")
        for slot in retain:
            em.g.call_function(ca_ops.call_retain_grad, (em.take("inputs"), grads[slot]),
                               name="call_retain_grad")
        for _ in range(n_pre):
            grads = em.pick(em.hook((list(grads),), "pre_hook"), n_slots)
        first = em.pos["inputs"]
        if body[0] == "prim" and body[3] and em.pos["hooks"]:  # NOTE [Saved values modified
            em.g.call_function(ca_ops.check_saved, (state, i), name="check_saved")  # by hooks]
        outs = _node_body(em, body, edges, grads, seeds)
        used = tuple(range(first, em.pos["inputs"])) if body[0] == "prim" else ()
        for _ in range(n_post):
            outs = em.pick(em.hook((list(outs), list(grads)), "post_hook"), len(outs))
        _route(em, entries, buffers, edges, outs)
        em.g.call_function(ca_ops.node_done, (state, i, used), name="node_done")
    em.g.call_function(ca_ops.exec_final_callbacks_stub, (), name="_exec_final_callbacks_stub")
    em.g.output([])
    for node in reversed(em.g.nodes):  # outputs nobody reads: no statement in the code
        if node.target is operator.getitem and not node.users:
            em.g.erase_node(node)
    return em.g


def _route(em: _Emitter, entries: tuple, buffers: dict, edges: tuple, outs: list) -> None:
    for k, (dst, slot) in enumerate(edges):
        if dst < 0:
            continue
        buf = buffers.get(dst)
        if buf is None:
            buf = buffers[dst] = [None] * entries[dst][4]
        val = outs[k] if k < len(outs) else None
        if val is None:
            continue
        old = buf[slot]
        buf[slot] = val if old is None else em.g.call_function(
            ca_ops.accumulate_grad_buffer, (old, val), name="accumulate_grad_buffer")


class CompiledAutogradGraph(GraphModule):
    """The ``hookgrad.fx.GraphModule`` a compiled-autograd capture hands to its compiler.

    ``forward(inputs, sizes, scalars, hooks, packed_data)`` runs the backward pass; its code
    comes from the one fx emitter, which drops each value after its last use, as PyTorch's
    generated code does: saved tensors are freed as the pass goes, and a gradient reaching
    ``call_accumulate_grad`` is held only by the graph, so ``.grad`` may keep its memory (NOTE
    [Stealing a gradient]). ``forward`` is generated per instance, so a compiler keyed by code
    objects (``hookgrad.compile``) sees one code key per capture. Calling the module runs
    ``forward`` directly (the backward pass is no module call: no module hooks fire).

    NOTE [Compiling a compiled-autograd graph]
    ``hookgrad.compile`` traces the graph's code on the first call (the hooks it calls are traced
    and guarded by their code, a hook it cannot trace raises `Unsupported` under fullgraph) and
    then, on every call its guards accept, runs this graph's generated code
    (``_hookgrad_run_original``): the execution tracer cannot represent writes to ``.grad`` or
    the data-dependent constants some backward rules compute, so its own artifact is not trusted
    with them.

    Mirrors: the ``GraphModule`` compiled autograd hands to its compiler.
    """

    _hookgrad_run_original = True

    def __init__(self, key: tuple, capture_id: int) -> None:
        super().__init__({}, build_graph(key), class_name=f"CompiledAutograd{capture_id}")
        self.key = key
        self.id = capture_id

    def __call__(self, *args: Any) -> Any:
        return self.forward(*args)
