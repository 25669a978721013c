"""Concrete nodes: `PrimitiveNode` (built from the op table) and `AccumulateGrad` (leaves).

NOTE [AccumulateGrad]
One accumulator per leaf, cached weakly on the tensor (``_grad_accumulator``): every node that
consumes the leaf points at the same object while the graph (or the user) holds it. Its sequence
number is 2**64-1 so it runs as soon as its last gradient arrives. Accumulation follows PyTorch:
- ``.grad`` is None: store the incoming gradient itself when nothing else can see its array
  (the engine made it and no hook kept it: the "steal" of PyTorch's refcount check), else a copy;
  under ``create_graph`` a differentiable copy.
- ``.grad`` exists: add in place, or out of place under ``create_graph`` (so ``.grad`` keeps a
  graph).
Post-accumulate-grad hooks run right after, with the leaf itself as argument.
"""

from __future__ import annotations

import sys
import threading
import warnings
import weakref
from typing import Any

import numpy as np

from hookgrad._backend import QUIET_RESET, QUIET_SET, QUIET_STATE
from hookgrad._config import GLOBAL, STATE
from hookgrad._dispatch import note_write
from hookgrad._ops._double_backward import tie_gradients
from hookgrad._ops._rule_ops import ARRAY_OPS
from hookgrad._ops.complex_ops import DIRECT_COMPLEX_RULES as _DIRECT
from hookgrad._ops.registry import Primitive
from hookgrad._tensor import Tensor
from hookgrad.autograd._hook_points import run_post_accumulate_hooks
from hookgrad.autograd._layout import copy_obeying, obeys
from hookgrad.autograd._node import Node
from hookgrad.autograd._plans import RulePlan, saved_arrays
from hookgrad.autograd._saved import FREED_ERROR, SavedTensor

ACCUMULATE_GRAD_SEQ = 2**64 - 1
_EMPTY: dict = {}
_NODE_CLASSES: dict[str, type] = {}


_PLANS: dict[Primitive, RulePlan] = {}


def plan_of(prim: Primitive) -> RulePlan:
    """The cached `RulePlan` of `prim` (NOTE [Rule plans])."""
    plan = _PLANS.get(prim)
    if plan is None:
        plan = _PLANS[prim] = RulePlan(prim, node_class(prim))
    return plan


# Set while a vmap level is open (hookgrad/_functorch/_rules.py): runs the rules of a node whose
# values are batched, per sample where a rule reads raw values (NOTE [vmap and rules]).
RULE_INTERPRETER: list = [None]


def call_rules(node: Any, grad: Any, grads: Any, saved: Any, callers: Any, edges: Any,
               needed: Any) -> tuple:
    """Each input's gradient from its rule, None where no edge or not needed (one loop for
    `PrimitiveNode.apply` and vmap's per-sample rule runner)."""
    params, meta = node._params, node._meta
    out = []
    for k, call in enumerate(callers):
        if edges[k][0] is None or (needed is not None and not needed[k]):
            out.append(None)
        else:
            out.append(call(grad, grads, saved, params, meta))
    return tuple(out)


_COMPLEX = frozenset({np.dtype(np.complex64), np.dtype(np.complex128)})


def _wirtinger(node: Any, grad: Any, grads: Any, saved: Any, callers: Any, edges: Any,
               needed: Any) -> tuple:
    """A holomorphic rule on a complex gradient: ``conj(rule(conj(grad)))`` (NOTE [Complex
    gradients] in _ops/complex_ops.py)."""
    token = QUIET_SET(QUIET_STATE)
    try:
        outs = call_rules(node, grad.conj_physical(), grads, saved, callers, edges, needed)
    finally:
        QUIET_RESET(token)
    return tuple(g.conj_physical() if g is not None and g._data.dtype in _COMPLEX else g
                 for g in outs)


class PrimitiveNode(Node):
    """The backward node of one primitive call; its class name is the PyTorch node name."""

    __slots__ = ("_prim", "_params", "_saved", "_meta", "_nout")

    def _num_slots(self) -> int:
        return self._nout

    def apply(self, grads: tuple, needed: tuple | None = None) -> tuple:
        prim = self._prim
        plan = _PLANS.get(prim) or plan_of(prim)
        # NOTE [Rule operations]: the engine chose the rules' operations for this pass
        stack = STATE.graph_task_stack
        arrays = stack and stack[-1].rule_ops is ARRAY_OPS
        # Every saved value is unpacked once per execution, in save order, before any rule
        # runs (PyTorch's generated apply does the same; unpack hooks observe it). Rules that
        # all run on arrays get arrays: no tensor is built for a saved output.
        saved = self._saved
        if saved:
            values = {}
            if arrays and plan.saved_as_arrays:
                for k, s in saved.items():
                    if type(s) is not SavedTensor:
                        values[k] = saved_arrays(self._unpack(s))
                    elif s._unpack is not None or s._freed:
                        values[k] = s.unpack_data(self)
                    # `unpack_data`'s common cases inline: an output at its saved version, a
                    # Python number (never version-checked)
                    elif s._is_output and s._vc.value == s._version:
                        values[k] = s._data
                    elif s._wrapped:
                        values[k] = s._tensor._data
                    else:
                        values[k] = s.unpack_data(self)
            else:
                for k, s in saved.items():
                    values[k] = s.unpack(self) if type(s) is SavedTensor else self._unpack(s)
            saved = values
        edges = self._next_edges
        if prim.num_outputs == 1:
            grad = grads[0]
            if grad is None:
                return (None,) * len(edges)
        elif all(g is None for g in grads):
            return (None,) * len(edges)
        else:
            grad = None
        callers = plan.array_callers if arrays else plan.callers
        if grad is not None and grad._data.dtype in _COMPLEX and prim.name not in _DIRECT:
            return _wirtinger(self, grad, grads, saved, callers, edges, needed)
        if RULE_INTERPRETER[0] is not None and not arrays:  # vmap over this backward
            return RULE_INTERPRETER[0](self, grad, grads, saved, callers, edges, needed)
        if len(callers) == 1:  # unary ops: no list, no enumerate (one call per recorded op)
            if edges[0][0] is None or (needed is not None and not needed[0]):
                return (None,)
            token = QUIET_SET(QUIET_STATE)  # (inline: once per node of every backward)
            try:
                out = (callers[0](grad, grads, saved, self._params, self._meta),)
            finally:
                QUIET_RESET(token)
        else:
            token = QUIET_SET(QUIET_STATE)
            try:
                out = call_rules(self, grad, grads, saved, callers, edges, needed)
            finally:
                QUIET_RESET(token)
        if prim.double_reads and not arrays:  # NOTE [Double-backward reads]
            return tie_gradients(prim, out, saved)
        return out

    def _unpack(self, s: Any) -> Any:
        if type(s) is tuple:
            return tuple(x.unpack(self) for x in s)
        return None if s is None else s.unpack(self)

    def input_metadata(self) -> list:
        meta = self._meta
        diff = self._prim.diff_inputs
        return meta if len(diff) == len(meta) else [meta[i] for i in diff]

    def release_saved(self) -> None:
        for s in self._saved.values():
            if type(s) is SavedTensor:
                # `SavedTensor.release` inline (once per saved value of every backward)
                s._freed = True
                s._tensor = s._data = None
                if s._packed is not None:
                    s._packed = None
            elif type(s) is tuple:
                for x in s:
                    x.release()
            elif s is not None:
                s.release()

    def __dir__(self) -> list[str]:
        # torchviz and PyTorch's tests discover saved values by listing ``_saved_*`` names.
        names = set(super().__dir__())
        names.update(f"_saved_{s}" for s in self._prim.saves)
        names.update(f"_raw_saved_{s}" for s in self._prim.saves)
        params = {**self._prim.defaults, **self._params}
        names.update(f"_saved_{p}" for p, v in params.items() if v is not None)
        return sorted(names)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_raw_saved_"):
            key = name[11:]
            if key in self._prim.saves or key in self._saved:
                return self._saved.get(key)
        elif name.startswith("_saved_"):
            key = name[7:]
            if key in self._prim.saves or key in self._saved:
                s = self._saved.get(key)
                if type(s) is tuple:
                    return tuple(x.unpack(self) for x in s)
                return None if s is None else s.unpack(self)
            if key in self._params:
                return self._params[key]
            if key in self._prim.defaults:  # a parameter left at its default
                return self._prim.defaults[key]
            if key.endswith("_sym_sizes") and key[:-10] in self._prim.inputs:
                return self._meta[self._prim.inputs.index(key[:-10])][0]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")


def node_class(prim: Primitive) -> type:
    """The (cached) PrimitiveNode subclass named after `prim`'s PyTorch node name."""
    cls = _NODE_CLASSES.get(prim.node_name)
    if cls is None:
        cls = type(prim.node_name, (PrimitiveNode,), {"__slots__": ()})
        _NODE_CLASSES[prim.node_name] = cls
    return cls


class AccumulateGrad(Node):
    """Accumulates gradients into a leaf's ``.grad`` (see NOTE [AccumulateGrad]).

    Mirrors: ``torch.autograd.graph`` accumulator node (``torch::autograd::AccumulateGrad``).
    """

    __slots__ = ("variable",)

    def __init__(self, variable: Tensor) -> None:
        super().__init__((), ACCUMULATE_GRAD_SEQ)
        self.variable = variable

    def name(self) -> str:
        return "torch::autograd::AccumulateGrad"

    def _tensor_hook_groups(self) -> list:
        hooks = self.variable._backward_hooks
        return [(0, hooks)] if hooks else []

    def _observed_hook_registries(self) -> list:
        out = super()._observed_hook_registries()
        if self.variable._post_accumulate_grad_hooks is not None:
            out.append(("post_accumulate_grad_hooks", self.variable._post_accumulate_grad_hooks))
        return out

    def _has_hooks(self) -> bool:
        v = self.variable
        return bool(
            self._pre_hooks or self._post_hooks or v._backward_hooks
            or v._post_accumulate_grad_hooks
        )

    def apply(self, grads: tuple, needed: tuple | None = None, owned: bool = False) -> tuple:
        new = grads[0]
        if new is None:
            return ()
        var = self.variable
        if var._grad_fn is not None:  # an in-place op made the leaf a result since
            raise RuntimeError("leaf variable has been moved into the graph interior")
        if var.requires_grad:
            with ACCUMULATE_LOCK:  # NOTE [Concurrent accumulation]
                accumulate_into(var, new, owned)
        # else the leaf stopped requiring grad after the graph was built
        # (``requires_grad_(False)``, ``detach_()``): PyTorch's AccumulateGrad leaves ``.grad``
        # alone but still runs the post-accumulate hooks
        hooks = var._post_accumulate_grad_hooks
        if hooks:
            run_post_accumulate_hooks(var, hooks)
        return ()


# Rules run on raw arrays in a plain backward: inf/nan gradients give no NumPy RuntimeWarning,
# as PyTorch's kernels never warn (NOTE [Quiet impls] in _ops/_elementwise.py); `apply` switches
# the warnings off inline around the rule calls.


def accumulate_into(var: Tensor, new: Tensor, owned: bool = False) -> None:
    """Add `new` into ``var.grad`` by PyTorch's rules (NOTE [AccumulateGrad]). `owned`: the
    caller vouches that nothing else references `new` or its memory (a compiled backward's
    fresh array, `compile/codegen/leaves.py`), which the reference counts here cannot see
    through the caller's frames (NOTE [Stealing a gradient])."""
    old = var._grad
    if STATE.grad_enabled:
        if not GLOBAL.create_graph_warned and _in_backward_call():
            GLOBAL.create_graph_warned = True
            warnings.warn(_CREATE_GRAPH_WARNING, UserWarning, stacklevel=2)
        if old is None:
            # PyTorch copies into a fresh tensor (``new_empty_strided(...).copy_(new)``), so a
            # differentiable first ``.grad`` shows ``CopyBackwards``, not ``CloneBackward0``.
            fresh = Tensor._make(copy_obeying(var._data, new._data))
            var._grad = fresh.copy_(new)  # type: ignore[attr-defined]
        else:
            var._grad = old + new  # type: ignore[attr-defined]
        return
    if old is None:
        data = new._data
        if (new._grad_fn is None and (owned or (sys.getrefcount(new) <= 5 and _owns(new, data)))
                and (obeys(var._data, data) or not STATE.grad_layout_enforced)):
            var._grad = Tensor._make(data)
        else:  # a copy, laid out by NOTE [Gradient layout contract]
            var._grad = Tensor._make(copy_obeying(var._data, data))
        return
    if old._data.shape == new._data.shape:
        old._data += new._data
        note_write(old)
    else:  # pragma: no cover - shapes are validated before accumulation
        var._grad = old + new  # type: ignore[attr-defined]


# NOTE [Stealing a gradient]
# A first ``.grad`` may keep the incoming gradient's memory when nothing else can see it, the
# way PyTorch keeps ``new_grad`` when its ``use_count()`` is 1. Reference counts stand in for
# use counts. Coming from the engine, `new` is referenced five times when nobody else holds
# it: the engine's buffer list, the grads tuple of `AccumulateGrad.apply`, its local, the
# parameter of `accumulate_into` and getrefcount's argument. Its array is referenced four
# times in `_owns`: ``new._data``, the local of `accumulate_into`, the parameter and the
# argument. The array may be a whole-array view of a temporary (a transposed matmul result, a
# reshaped sum): then the temporary is referenced by the view's ``base``, by the local and the
# argument, and, when `new` is a view made by a rule (``TBackward0``'s ``grad.t()``), by the
# array of the view's base tensor if only `new` holds that tensor. A gradient that a hook, a
# user or another buffer slot holds, or memory shared with any other tensor, shows a higher
# count and is copied. The kept array is C-contiguous, the layout a copy would have.


def _owns(new: Tensor, data: Any) -> bool:
    """Whether `data` (``new._data``) may become a ``.grad`` (NOTE [Stealing a gradient])."""
    # a read-only array (a broadcast view, an array made from a NumPy scalar) cannot take the
    # next accumulation in place
    if sys.getrefcount(data) > 4 or not data.flags.c_contiguous or not data.flags.writeable:
        return False
    owner = data.base
    if owner is None:
        return True
    if type(owner) is not type(data) or owner.base is not None or owner.size != data.size:
        return False
    expected = 3
    src = new._base
    if src is not None and sys.getrefcount(src) <= 3:  # new's __dict__, the local, the argument
        src_data = src._data
        if src_data is owner or (src_data.base is owner and sys.getrefcount(src_data) <= 3):
            expected += 1
    return sys.getrefcount(owner) <= expected


def warn_create_graph_backward() -> None:
    """PyTorch's engine warns once per process when ``backward()`` runs with ``create_graph``.

    It warns on entry, whatever the graph accumulates into (leaves, non-leaf ``inputs=`` or
    nothing at all), and whatever the grad mode of the caller.
    """
    if not GLOBAL.create_graph_warned:
        GLOBAL.create_graph_warned = True
        warnings.warn(_CREATE_GRAPH_WARNING, UserWarning, stacklevel=4)


def _in_backward_call() -> bool:
    stack = STATE.graph_task_stack
    return bool(stack) and stack[-1].is_backward


def get_accumulator(t: Tensor) -> AccumulateGrad:
    """The leaf's accumulator, created on demand and cached weakly (NOTE [AccumulateGrad])."""
    src = t._leaf_alias_of
    if src is None:
        src = t
    ref = getattr(src, "_grad_accumulator", None)  # a slot, unset until first needed
    acc = ref() if ref is not None else None
    if acc is None:
        with ACCUMULATE_LOCK:  # two threads must not give one leaf two accumulators
            ref = getattr(src, "_grad_accumulator", None)
            acc = ref() if ref is not None else None
            if acc is None:
                acc = AccumulateGrad(src)
                src._grad_accumulator = weakref.ref(acc)
    return acc


# NOTE [Concurrent accumulation]
# Backward may run in several threads at once over graphs that share leaves (one module used by
# two threads). Reading ``.grad``, adding and storing it back is not atomic even with the GIL,
# so, like PyTorch's AccumulateGrad mutex, one lock serialises accumulation (not the hooks
# around it). Re-entrant: a ``.grad`` accumulation never calls back into accumulation, but a
# create_graph accumulation runs ops whose recorders might.
ACCUMULATE_LOCK = threading.RLock()


_CREATE_GRAPH_WARNING = (
    "Using backward() with create_graph=True will create a reference cycle between the parameter "
    "and its gradient which can cause a memory leak. We recommend using autograd.grad when "
    "creating the graph to avoid this. If you have to use this function, make sure to reset the "
    ".grad fields of your parameters to None after use to break the cycle and avoid the leak."
)

__all__ = [
    "PrimitiveNode", "AccumulateGrad", "RulePlan", "plan_of", "node_class", "get_accumulator",
    "accumulate_into", "SavedTensor", "FREED_ERROR", "ACCUMULATE_GRAD_SEQ", "call_rules",
]
