"""Compiled autograd, step 1: walk a backward pass's graph once (spec §10.2, §10.3).

`collect` takes the eager engine's schedule of the autograd graph below the roots
(`hookgrad.autograd._schedule.schedule`, NOTE [One backward schedule]) and returns a
`Collected`: the cache key and the runtime inputs of this pass.

NOTE [Compiled autograd key]
The key holds, per node in execution order, everything the captured graph's *structure*
depends on and nothing else: the node kind (a primitive, by identity; AccumulateGrad; the
module-hook identity node; the graph root; or the class of a node whose own backward the graph
calls), its edges as positions in the order, the number of hooks at each hook point (tensor
pre-hooks per slot, retain-grad slots, node pre-hooks, node post-hooks, post-accumulate hooks),
the layout of saved values (absent, a tensor, a value packed by saved-tensor hooks), ranks and
dtypes, whether a leaf's ``.grad`` is None, and the non-integer primitive parameters (bools,
strings, floats: PyTorch keys a node's saved Scalars too). Sizes, integer parameters (dims,
shapes), saved tensors and hook objects are runtime inputs. The graph is built from the key
alone (`ca_graph.build_graph`), so two passes with one key are served by one graph by
construction.

The runtime inputs are gathered in one fixed order per node, which `ca_graph` mirrors:
tensor pre-hooks, retained tensors, node pre-hooks, then the node's own inputs (saved values,
sizes and scalars of a primitive; the variable and post-accumulate hooks of a leaf), then node
post-hooks.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from hookgrad._config import GLOBAL
from hookgrad.autograd._nodes import AccumulateGrad, PrimitiveNode
from hookgrad.autograd._saved import FREED_ERROR, SavedTensor
from hookgrad.autograd._schedule import schedule
from hookgrad.autograd.engine import GraphRoot
from hookgrad.nn.modules._backward_hook import BackwardHookFunctionBackward

__all__ = ["Collected", "collect", "Fallback", "PRIMS"]


class Fallback(Exception):
    """The pass cannot be expressed as a compiled-autograd graph; the message says why."""


class Collected(NamedTuple):
    """One pass: its key, the runtime inputs, and what the runtime needs around the graph."""

    key: tuple
    inputs: list
    sizes: list
    scalars: list
    hooks: list
    packed: list
    nodes: list  # the autograd nodes in execution order (saved values are freed after)
    deps: dict  # node -> dependency count (for `will_engine_execute_node` inside hooks)


# Floats are in the key as PyTorch keys a node's saved ``Scalar`` (``x.pow(2.5)`` then
# ``x.pow(3.5)``: two captures there too); ints and tuples (dims, sizes) are runtime inputs, as
# PyTorch's SymInts are. A number the user multiplies by is a wrapped tensor: an input.
_STATIC = (bool, str, type(None), float, complex)
_NONE: tuple = ((), ())
_NO_HOOKS: tuple = ((), (), 0)
_NAMES: dict = {}  # node class -> node name
PRIMS: dict = {}  # id -> primitive, for the primitives keys name by id (they are not hashable)


def _split_params(params: dict, scalars: list) -> tuple:
    """Key parameters, and the names of the runtime ones (their values go to `scalars`)."""
    static = []
    names = []
    for k, v in params.items():
        if isinstance(v, _STATIC):
            static.append((k, v))
        else:
            names.append(k)
            scalars.append(v)
    return tuple(static), tuple(names)


class _Collector:
    def __init__(self) -> None:
        self.inputs: list = []
        self.sizes: list = []
        self.scalars: list = []
        self.hooks: list = []
        self.packed: list = []

    def hook_layout(self, node: Any) -> tuple:
        groups = []
        for slot, registry in list(node._tensor_hook_groups()):
            fns = list(registry.values())
            self.hooks.extend(fns)
            groups.append((slot, len(fns)))
        retain = []
        for slot, ref in list((node._retain_hooks or {}).items()):
            t = ref()
            if t is not None:
                self.inputs.append(t)
                retain.append(slot)
        pre = list(node._pre_hooks.values()) if node._pre_hooks else []
        self.hooks.extend(pre)
        return tuple(groups), tuple(retain), len(pre)

    def post_hooks(self, node: Any) -> int:
        post = list(node._post_hooks.values()) if node._post_hooks else []
        self.hooks.extend(post)
        return len(post)

    def shape(self, shape: tuple) -> int:
        self.sizes.extend(shape)
        return len(shape)

    def saved_one(self, node: Any, s: Any) -> str:
        if s is None:
            return "none"
        if type(s) is not SavedTensor:
            raise Fallback(f"{node.name()} saves a value of type {type(s).__name__}")
        if s._unpack is not None:  # saved-tensor hooks: the graph calls the unpack hook
            if s._freed:
                raise RuntimeError(FREED_ERROR)
            self.packed.append(s._packed)
            self.hooks.append(s._unpack)
            return "packed"
        self.inputs.append(s.unpack(node))  # version and freed checks happen here
        return "tensor"

    def primitive(self, node: PrimitiveNode) -> tuple:
        prim = node._prim
        token = id(prim)
        if token not in PRIMS:  # registered or a variadic copy (``cat`` of n tensors)
            PRIMS[token] = prim  # held: the id stays this primitive's
        name = _NAMES.get(type(node))
        if name is None:
            name = _NAMES[type(node)] = node.name()
        saved: tuple = ()
        if node._saved:
            layout = []
            inputs = self.inputs
            for key, s in node._saved.items():
                if type(s) is SavedTensor and s._unpack is None:  # the common case, inline
                    inputs.append(s.unpack(node))
                    layout.append((key, "tensor"))
                elif type(s) is tuple:
                    layout.append((key, tuple(self.saved_one(node, x) for x in s)))
                else:
                    layout.append((key, self.saved_one(node, s)))
            saved = tuple(layout)
        sizes = self.sizes
        meta = []
        for m in node._meta:
            if m is None:
                meta.append(None)
            else:
                shape = m[0]
                sizes.extend(shape)
                meta.append((len(shape), m[1]))
        static, names = _split_params(node._params, self.scalars) if node._params else _NONE
        return ("prim", token, name, saved, tuple(meta), static, names, node._nout)

    def leaf(self, node: AccumulateGrad) -> tuple:
        var = node.variable
        self.inputs.append(var)
        hooks = var._post_accumulate_grad_hooks
        fns = list(hooks.values()) if hooks else []
        self.hooks.extend(fns)
        return ("leaf", var._grad is None, var._data.dtype, var._data.ndim, len(fns))

    def module_hook(self, node: BackwardHookFunctionBackward) -> tuple:
        metas = tuple((self.shape(shape), dtype) for shape, dtype, _xp in node._metas)
        return ("bwhook", metas)

    def node_entry(self, node: Any) -> tuple:
        kind = type(node)
        if kind is AccumulateGrad:
            return self.leaf(node)
        if kind is BackwardHookFunctionBackward:
            return self.module_hook(node)
        if kind is GraphRoot:
            return ("root", len(node._seeds))
        # Any other node (a custom autograd.Function's, CopySlices, a compiled function's): the
        # graph calls its own backward, the node object being a runtime input in `hooks`, as
        # PyTorch passes a custom Function's backward object (``call_backward``).
        self.hooks.append(node)
        return ("node", kind)


def collect(roots: list, seeds: list) -> Collected:
    """Key and runtime inputs of the pass from `roots` (``(node, slot)`` edges) with `seeds`.

    Raises:
        Fallback: a node kind or mode the graph cannot express (the caller runs eagerly).
        RuntimeError: eager's errors for freed or modified saved tensors.
    """
    if GLOBAL.anomaly:
        raise Fallback("anomaly mode is on (its per-node checks need the eager engine)")
    col = _Collector()
    if len(roots) == 1:
        root, root_slot = roots[0]
        col.inputs.append(seeds[0])
        header: tuple = (root_slot, seeds[0] is None)
    else:
        root = GraphRoot(tuple(roots), seeds)
        col.inputs.extend(seeds)
        header = (None, tuple(s is None for s in seeds))
    order, deps = schedule(root)  # NOTE [One backward schedule]
    pos = {node: i for i, node in enumerate(order)}
    entries = []
    primitive = col.primitive
    for node in order:
        hooked = node._has_hooks()
        layout = col.hook_layout(node) if hooked else _NO_HOOKS
        try:
            prim = isinstance(node, PrimitiveNode)
            body = primitive(node) if prim else col.node_entry(node)
        except RuntimeError as e:  # freed or modified saved values: eager raises at the node,
            # after the hooks that run before it (collecting first would skip those)
            raise Fallback(f"{node.name()}: {str(e).split('.')[0]}") from None
        post = col.post_hooks(node) if hooked else 0
        edges = tuple([(-1, 0) if n is None else (pos[n], slot) for n, slot in node._next_edges])
        entries.append((body, layout, post, edges, node._nout if prim else node._num_slots()))
    key = (header, tuple(entries))
    return Collected(key, col.inputs, col.sizes, col.scalars, col.hooks, col.packed, order, deps)
