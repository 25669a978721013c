"""`GradRecorder`: builds backward nodes inside `bind` when grad mode is on and an input needs it.

It is the only place where graph nodes for primitives are created, and the only place where
saved tensors are made (so saved-tensor hooks apply to every op without op code knowing).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from hookgrad._config import STATE, install_grad_recorder
from hookgrad._ops._layout import like_empty_like
from hookgrad._ops.registry import Primitive
from hookgrad._tensor import Tensor
from hookgrad.autograd._edges import (
    check_view_inplace,
    gradient_edge,
    move_autograd_identity,
    sync_view,
)
from hookgrad.autograd._nodes import _PLANS, PrimitiveNode, SavedTensor, plan_of

_FLOAT_KINDS = "fcV"  # V: bfloat16 (NOTE [bfloat16])


def build_node(
    prim: Primitive, inputs: tuple, params: dict, outs: tuple, cast: Any = None,
    original: Tensor | None = None, target: Tensor | None = None,
) -> PrimitiveNode | None:
    """Create the node for one recorded call and attach it to `outs`; None if nothing needs grad.

    The signature starts with the recorder protocol's ``record`` (`cast` is unused: the engine
    casts gradients back by the inputs' metadata), so `GradRecorder.record` *is* this function.
    `target`/`original`: for in-place ops, the tensor being modified and a copy of its pre-op
    value to save in its place (PyTorch saves ``original_self`` the same way).
    """
    edges = []
    mask = 0  # bit k: diff input k needs a gradient (it has a valid edge)
    wants = False  # some input requires grad (a view made without a graph has no edge)
    bit = 1
    for idx in prim.diff_inputs:
        t = inputs[idx]
        if t._requires_grad or (t._base is not None and sync_view(t)):
            fn = t._grad_fn
            # the common case of `gradient_edge` inline: a non-view with a grad_fn
            edge = (fn, t._output_nr) if fn is not None and t._base is None else gradient_edge(t)
            edges.append(edge)
            wants = True
            if edge[0] is not None:  # PyTorch saves only for edges that can take a gradient
                mask |= bit
        else:
            edges.append(_NO_EDGE)
        bit <<= 1
    if not wants:
        return None
    plan = _PLANS.get(prim) or plan_of(prim)
    if not mask and plan.same_uses:
        # PyTorch guards a saved value by the inputs needing it only when the inputs' formulas
        # differ; one joint formula (or one input) saves unconditionally
        mask = (1 << len(edges)) - 1
    node = plan.cls(tuple(edges))
    node._prim = prim
    node._params = params
    # `_meta_of`'s commonest cases inline: one dict probe per op
    n_in = len(inputs)
    if n_in == 2:
        a, b = inputs[0]._data, inputs[1]._data
        meta = _METAS.get((a.shape, a.dtype, b.shape, b.dtype))
    elif n_in == 1:
        a = inputs[0]._data
        meta = _METAS.get((a.shape, a.dtype))
    else:
        meta = None
    node._meta = meta if meta is not None else _meta_of(inputs)
    # One input slot per *differentiable* output, as PyTorch's nodes have (non-differentiable
    # outputs are always trailing: defop checks), so node hooks see torch's tuple lengths.
    node._nout = len(outs) - len(prim.nondifferentiable_outputs)
    if plan.single:
        o = outs[0]
        if o._data.dtype.kind in _FLOAT_KINDS:
            o._requires_grad = True
            o._grad_fn = node
    else:
        nondiff = prim.nondifferentiable_outputs
        for j, o in enumerate(outs):
            if j not in nondiff and o._data.dtype.kind in _FLOAT_KINDS:
                o._requires_grad = True
                o._grad_fn = node
                o._output_nr = j
    if prim.saves:
        wanted = plan.save_lists.get(mask) or plan.saves_for(prim, mask)
        node._saved = _save(wanted, inputs, outs, node, original, target)
    else:
        node._saved = _NOTHING_SAVED if not plan.packs_indices else _save_indices(node, params)
    return node


def _save_indices(node: PrimitiveNode, params: dict) -> dict:
    """Save advanced indexing's index tensors as PyTorch does (so pack hooks see them)."""
    indices = params["indices"]
    originals = getattr(indices, "originals", None)
    if originals is None:  # built without the public indexing path (a rule, a replay)
        originals = [Tensor._make(a) for a in indices if a is not None]
    return {"indices": tuple(SavedTensor(t, False, node) for t in originals)}


_NO_EDGE = (None, 0)

# Speed: a node's ``_meta`` (``(shape, dtype)`` per input) is immutable, so equal ones are
# shared. Interning takes the 3-5 tuples each recorded op would keep alive off the heap, and
# with them a good part of the cyclic GC's young-generation work on long graphs.
_METAS: dict = {}


def _meta_of(inputs: tuple) -> tuple:
    if len(inputs) == 1:
        d = inputs[0]._data
        key: tuple = (d.shape, d.dtype)
    elif len(inputs) == 2:
        a, b = inputs[0]._data, inputs[1]._data
        key = (a.shape, a.dtype, b.shape, b.dtype)
    else:
        return tuple([(t._data.shape, t._data.dtype) for t in inputs])
    meta = _METAS.get(key)
    if meta is None:
        if len(_METAS) >= 4096:  # bounded: programs with ever-new shapes
            _METAS.clear()
        meta = _METAS[key] = (key,) if len(key) == 2 else ((key[0], key[1]), (key[2], key[3]))
    return meta


_NOTHING_SAVED: dict = {}  # shared and never mutated: nodes that save nothing
_SAVE_AFTER_WRITE = object()  # placeholder of an in-place op's result until `rebase`


def _save(wanted: tuple, inputs: tuple, outs: tuple, node: PrimitiveNode,
          original: Tensor | None, target: Tensor | None) -> dict:
    saved: dict[str, Any] = {}
    for name, src in wanted:
        if src == -1 and target is not None:
            # In-place: the result is the target *after* the write; `rebase` saves it then, so
            # pack hooks see the modified tensor as in PyTorch.
            saved[name] = _SAVE_AFTER_WRITE
        elif src == -1:  # "result"
            saved[name] = SavedTensor(outs[0], True, node)
        elif src <= -10:  # "result<k>": one output alone
            saved[name] = SavedTensor(outs[-10 - src], True, node)
        elif src == -2:  # "results"
            saved[name] = tuple(SavedTensor(o, o._grad_fn is node, node) for o in outs)
        else:
            t = inputs[src]
            if src == 0 and target is not None and t is target:
                # only `self` is saved as its pre-op copy; another input that is the target
                # (``x.mul_(x)``) is saved as it is and fails its version check, as in PyTorch
                t = original
            saved[name] = SavedTensor(t, False, node)
    return saved


class GradRecorder:
    """Records backward nodes (the ``Recorder`` protocol of `_config`)."""

    __slots__ = ("_pending",)
    sees_backward = False  # builds graphs; backward rules need no hookgrad ops for it

    def __init__(self) -> None:
        # in-place calls between record_inplace and rebase, keyed by id(out): per call, so
        # threads and nested in-place ops never take each other's entries
        self._pending: dict = {}

    # Only called while grad mode is on (NOTE [Recorder tuples] in _config). `bind` calls it
    # once per op: the function itself, not a method forwarding to it (one frame less per op).
    record = staticmethod(build_node)

    def record_inplace(self, prim: Primitive, inputs: tuple, params: dict, out: Tensor,
                       target: Tensor, cast: Any = None) -> None:
        if target._base is not None:
            check_view_inplace(target, inputs)  # views "require grad" through their base
        if not STATE.grad_enabled or not any(
                t._requires_grad or (t._base is not None and sync_view(t)) for t in inputs):
            return
        if target._base is None and target._data.dtype.kind not in "fcV":
            return  # an integral result cannot require grad (views: CopySlices, as PyTorch)
        check_inplace_allowed(target)
        original = None
        if _rules_need_input(prim, inputs, target):
            # A copy with the target's old gradient edge (if any: the target may be a constant
            # written with an operand that requires grad) stands in for the overwritten value.
            copy = getattr(target, "_detached_copy", None)  # a vmap-batched target: all samples
            original = Tensor._make(_clone_data(target._data), target._requires_grad) \
                if copy is None else copy()
            original._requires_grad = target._requires_grad
            if target._requires_grad:
                original._grad_fn, original._output_nr = gradient_edge(target)
        node = build_node(prim, inputs, params, (out,), cast, original, target)
        if node is not None:
            self._pending[id(out)] = node

    def rebase(self, target: Tensor, out: Tensor) -> None:
        node = self._pending.pop(id(out), None)
        if node is None:
            return
        if target._base is not None:
            from hookgrad.autograd._copy_slices import rebase_view_inplace

            rebase_view_inplace(target, node)
        else:
            move_autograd_identity(target, node, 0)
            target._requires_grad = True
        _save_results_after_write(node, target)

    def record_write(self, target: Tensor) -> None:
        return None

    def record_function(self, fn_cls: Any, inputs: tuple, outputs: tuple) -> None:
        return None  # `Function.apply` builds its own node (its ctx is the node)


def _save_results_after_write(node: PrimitiveNode, target: Tensor) -> None:
    saved = node._saved
    for name, value in saved.items():
        if value is _SAVE_AFTER_WRITE:
            st = SavedTensor(target, True, node)
            st._output_nr = 0
            st._requires_grad = True
            saved[name] = st


def _rules_need_input(prim: Primitive, inputs: tuple, target: Tensor) -> bool:
    names = {prim.inputs[0]} if inputs and inputs[0] is target else set()
    for idx in prim.diff_inputs:
        if inputs[idx]._requires_grad and names & set(prim.uses[prim.inputs[idx]]):
            return True
    return False


def _clone_data(data: Any) -> Any:
    """PyTorch's ``self.clone()`` of an in-place op's target: its layout kept (dense in its dim
    order when it is not), so gradients computed from the copy are laid out as PyTorch's."""
    if type(data) is not np.ndarray or data.flags.c_contiguous:
        return data.copy()
    return like_empty_like(data.copy(), data)


def check_inplace_allowed(target: Tensor) -> None:
    """PyTorch's errors for in-place ops on leaves (or views of leaves) that require grad."""
    if not STATE.grad_enabled:
        return
    if target._base is None:
        if target._requires_grad and target._grad_fn is None:
            raise RuntimeError(
                "a leaf Variable that requires grad is being used in an in-place operation."
            )
        return
    vc = target._version_counter
    if (target._grad_fn is None and target._requires_grad and vc is not None
            and target._view_version != vc.value):
        # a view that requires grad only through its base, written since it was made (the
        # base got its graph that way): PyTorch's leaf test reads the view's own grad_fn,
        # which it never had
        raise RuntimeError(
            "a leaf Variable that requires grad is being used in an in-place operation."
        )
    base = target._base
    # PyTorch's check_inplace asks whether the view requires grad and its base is a leaf, which
    # it stays after ``base.requires_grad_(False)`` (the view keeps its graph)
    if base._grad_fn is None and (base._requires_grad or target.requires_grad):
        raise RuntimeError(
            "a view of a leaf Variable that requires grad is being used in an in-place operation."
        )
    fn = target._grad_fn
    if fn is not None and getattr(fn, "_forbid_inplace_view", False):
        from hookgrad.autograd.function import inplace_view_error

        raise RuntimeError(inplace_view_error(fn, target._output_nr))


GRAD_RECORDER = GradRecorder()
install_grad_recorder(GRAD_RECORDER)

__all__ = ["GradRecorder", "GRAD_RECORDER", "build_node", "check_inplace_allowed"]
