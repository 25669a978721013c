"""`BatchedTensor` and the vmap interpreter that `bind` hands batched primitive calls to.

NOTE [vmap on the door]
A `BatchedTensor` is the *logical* per-sample value a vmapped function sees. It holds the
*physical* tensor ``_bt_value`` whose dimension 0 is the batch dimension of its vmap level
``_bt_level`` (levels nest: the physical value of a level-2 tensor may itself be a level-1
BatchedTensor). Its ``_data`` is a view of sample 0 of the physical array, so every piece of
metadata (shape, dtype, strides, device, ``dim()``) is the logical one without a special case;
everything that would *read values* (``item``, ``bool``, ``tolist``, ``numpy``) raises
PyTorch's vmap errors instead.

While a vmap level is open, `interpret` sits in front of `bind` (``_dispatch.INTERPRETER``):
when an input (or a tensor inside a parameter list) is batched, it takes the highest level
among them, unwraps that level only, runs the primitive's batching rule (``Primitive.batch``,
declared in ``_ops/_batching*.py``) or the per-sample loop fallback on the physical tensors,
re-wraps the results at that level and then tells the recorders about the *logical* call, as
`bind` would have. The physical ops of the rule go through `bind` again, so outer vmap levels,
an outer ``grad`` (it records the physical ops) and dispatch modes see them; an inner ``grad``
records the logical op on BatchedTensors. That is how vmap composes with every transform in
either order without any transform knowing about the others.
"""

from __future__ import annotations

import threading
import weakref
from typing import Any

import numpy as np

from hookgrad import _backend, _dispatch
from hookgrad._config import STATE, add_recorder, remove_recorder
from hookgrad._functional import creation as _creation
from hookgrad._functorch import _rules
from hookgrad._functorch._rules import LogicalArray, RawValueRead, run_jvp, run_rules
from hookgrad._functorch.decompositions import DECOMPOSITIONS
from hookgrad._memory_format import empty_for
from hookgrad._ops import (  # noqa: F401  (declare rules)
    _batching_extra, _batching_nn, _batching_select, _batching_shape,
)
from hookgrad._ops._batching import loop
from hookgrad._ops.registry import PRIMITIVES
from hookgrad._tensor import Tensor
from hookgrad.autograd import _nodes
from hookgrad.autograd import forward_ad as _forward_ad
from hookgrad.utils import _python_dispatch as _pd

__all__ = ["BatchedTensor", "wrap", "unwrap", "is_batched", "interpret", "push_level",
           "pop_level", "current_levels"]

_ITEM = ("vmap: It looks like you're calling .item() on a Tensor. We don't support vmap over "
         "calling .item() on a Tensor, please try to rewrite what you're doing with other "
         "operations. If error is occurring somewhere inside PyTorch internals, please file a "
         "bug report.")
_CONTROL = ("vmap: It looks like you're attempting to use a Tensor in some data-dependent "
            "control flow. We don't support that yet, please file an issue at "
            "https://github.com/pytorch/pytorch/issues .")
class BatchedTensor(Tensor):
    """The logical value of one sample inside ``vmap`` (NOTE [vmap on the door]).

    Mirrors: functorch's ``BatchedTensor`` (``torch._C._functorch.is_batchedtensor``).
    """

    _saved_whole = True  # saved as itself by autograd, never rebuilt from ``_data``

    def item(self) -> Any:
        raise RuntimeError(_ITEM)

    def __bool__(self) -> bool:
        raise RuntimeError(_CONTROL)

    def _python_scalar(self) -> Any:
        raise RuntimeError(_CONTROL)

    def __index__(self) -> int:
        raise RuntimeError(_CONTROL)

    def tolist(self) -> Any:
        raise RuntimeError(_CONTROL)

    def numpy(self, *, force: bool = False) -> np.ndarray:
        raise RuntimeError(_CONTROL)

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        raise RuntimeError(_CONTROL)

    def detach(self) -> Tensor:
        return wrap(self._bt_value.detach(), self._bt_level)

    def _detached_copy(self) -> Tensor:
        """A copy of every sample, outside autograd (what an in-place op's node keeps of the
        value it overwrites)."""
        return wrap(self._bt_value.detach().clone(), self._bt_level)

    @property
    def data(self) -> Tensor:
        return wrap(self._bt_value.detach(), self._bt_level)

    def __repr__(self) -> str:
        return (f"BatchedTensor(lvl={self._bt_level}, bdim=0, value=\n"
                f"{_indent(repr(self._bt_value))}\n)")

    def __deepcopy__(self, memo: dict) -> Tensor:
        return wrap(self._bt_value.__deepcopy__(memo), self._bt_level)


def _indent(text: str) -> str:
    return "\n".join("    " + line for line in text.splitlines())


def _sample0(phys: Tensor) -> Any:
    data = phys._data
    if data.shape[0] == 0:  # an empty batch: metadata only, no sample to view
        return np.broadcast_to(np.zeros((), data.dtype), data.shape[1:]).view(LogicalArray)
    # NOTE [vmap and rules]: the metadata of sample 0; its values refuse to be read
    # ``(0, ...)``, not ``0``: a 0-d sample must be a 0-d array view, never a NumPy scalar
    # (whose values could be read silently)
    return np.ndarray.__getitem__(data, (0, Ellipsis)).view(LogicalArray)


_getitem = np.ndarray.__getitem__
_weakref = weakref.ref
_SAMPLE0 = (0, Ellipsis)


def wrap(phys: Tensor, level: int) -> BatchedTensor:
    """`phys` (batch dimension 0) as the logical tensor of vmap `level`."""
    data = phys._data
    # `_sample0` and `_vc` inlined: every output of every batched op is wrapped here
    arr = _getitem(data, _SAMPLE0).view(LogicalArray) if data.shape[0] else _sample0(phys)
    arr._owner = _weakref(t := BatchedTensor._make(arr))  # NOTE [Masks of batched values]
    t._bt_value = phys
    t._bt_level = level
    vc = phys._version_counter
    t._version_counter = vc if vc is not None else phys._vc()
    return t


def unwrap(t: Any, level: int) -> tuple[Any, bool]:
    """``(physical, True)`` for a tensor batched at `level`, else ``(t, False)``."""
    if type(t) is BatchedTensor and t._bt_level == level:
        return t._bt_value, True
    return t, False


def is_batched(t: Any) -> bool:
    """Whether `t` is a vmap-batched tensor. Mirrors: ``torch._C._functorch.is_batchedtensor``."""
    return type(t) is BatchedTensor


# ------------------------------------------------------------------------------- levels
_local = threading.local()
_COUNT = [0]  # open levels on any thread (keeps bind's single check)
_LOCK = threading.Lock()


def current_levels() -> list:
    """This thread's open vmap levels as ``[level, batch_size, randomness]`` lists."""
    lv = getattr(_local, "levels", None)
    if lv is None:
        lv = _local.levels = []
    return lv


_NEXT = [0]


class _SeesBackward:
    """On the thread's recorder stack while a vmap level is open: backward rules then run with
    hookgrad ops, so the ops of ``vmap(grad(f))``'s backward are batched too."""

    sees_backward = True

    def record(self, *args: Any) -> None:
        pass

    record_inplace = rebase = record_write = record_function = record


_SEES_BACKWARD = _SeesBackward()


def push_level(batch_size: int, randomness: str) -> int:
    """Open a vmap level; `interpret` sits in front of `bind` while any level is open."""
    with _LOCK:
        _NEXT[0] += 1
        level = _NEXT[0]
        _COUNT[0] += 1
        _pd.ACTIVE[0] += 1  # bind's one check on the hot path (NOTE [vmap on the door])
        _dispatch.INTERPRETER[0] = interpret
        _nodes.RULE_INTERPRETER[0] = run_rules
        _forward_ad.JVP_INTERPRETER[0] = run_jvp
        _creation.BATCHED_LIKE[0] = batched_like
    lv = current_levels()
    if not lv:
        add_recorder(_SEES_BACKWARD)
    lv.append([level, batch_size, randomness])
    return level


def pop_level(level: int) -> None:
    """Close `level` (the innermost open one)."""
    lv = current_levels()
    if lv and lv[-1][0] == level:
        lv.pop()
    if not lv:
        remove_recorder(_SEES_BACKWARD)
    with _LOCK:
        _COUNT[0] -= 1
        _pd.ACTIVE[0] -= 1
        if not _COUNT[0]:
            _dispatch.INTERPRETER[0] = None
            _nodes.RULE_INTERPRETER[0] = None
            _forward_ad.JVP_INTERPRETER[0] = None
            _creation.BATCHED_LIKE[0] = None


def _batch_size(level: int) -> int:
    levels = current_levels()
    if levels and levels[-1][0] == level:  # the innermost level: the common case
        return levels[-1][1]
    for lv, size, _ in levels:
        if lv == level:
            return size
    raise RuntimeError("vmap: a batched tensor escaped its vmap level")


_rules.LEVELS[:] = [_batch_size, wrap]


def batched_like(source: Any, out: Tensor) -> Tensor:
    """`out` (a fresh ``*_like``/``new_*`` of `source`) with every batch dimension `source`
    has: PyTorch's factory rules make such a tensor batched, so per-sample values can be
    written into it in place."""
    if type(source) is not BatchedTensor:
        return out
    phys = source._bt_value
    arr = out._data
    xp = _backend.namespace_of(arr)
    size = phys._data.shape[0]
    parr = phys._data
    if type(parr) is np.ndarray and type(arr) is np.ndarray and parr.shape[1:] == arr.shape:
        # laid out like the physical value, as PyTorch's rule runs the factory on it (a
        # random fill then follows its memory order)
        full = empty_for(parr, "preserve_format", arr.dtype)
        full[...] = arr
    else:  # own memory, batch outermost
        full = xp.array(xp.broadcast_to(arr, (size,) + arr.shape), order="C")
    stacked = Tensor._make(full)
    stacked._requires_grad = out._requires_grad
    return wrap(batched_like(phys, stacked), source._bt_level)


_SAMPLE_ARRAY = ("vmap: a batched tensor's raw array (one sample's values) reached a primitive; "
                 "hookgrad reads values only through primitives under vmap")


def _param_levels(params: dict, level: int) -> tuple[int, int]:
    """``(highest level among `level` and the params, highest level of a tensor directly in a
    parameter or a plain parameter list)``: a tensor of the call's level in a parameter (a
    loss weight, an index list) sends the call to the per-sample fallback loop."""
    plevel = -1
    for v in params.values():
        tv = type(v)
        if tv is BatchedTensor:
            if v._bt_level > plevel:
                plevel = v._bt_level
        elif tv is list or tv is tuple:  # a plain list: its tensors take the fallback
            for e in v:
                if type(e) is BatchedTensor and e._bt_level > plevel:
                    plevel = e._bt_level
                elif type(e) is LogicalArray:
                    raise RawValueRead(_SAMPLE_ARRAY)
        elif isinstance(v, (list, tuple)):  # an IndexTuple keeps its tensors: the rules
            for e in (*v, *getattr(v, "originals", ())):  # rebuild them per sample
                if type(e) is BatchedTensor and e._bt_level > level:
                    level = e._bt_level
                elif type(e) is LogicalArray:
                    raise RawValueRead(_SAMPLE_ARRAY)
        elif tv is LogicalArray:
            raise RawValueRead(_SAMPLE_ARRAY)
    return max(level, plevel), plevel


def interpret(prim: Any, inputs: tuple, params: dict, cast: Any, target: Any = None) -> Any:
    """Run a primitive call whose inputs may be batched (NOTE [vmap on the door]).

    Returns `_pd.MISS` when nothing is batched (bind then runs the call as usual): every
    physical op of a rule comes back here once, so the level search is inlined.
    """
    level = plevel = -1
    for t in inputs:
        if type(t) is BatchedTensor:
            if t._bt_level > level:
                level = t._bt_level
        elif type(getattr(t, "_data", None)) is LogicalArray:
            # a plain tensor over one sample's metadata (a rule's ``_make(x._data)``): its
            # values are sample 0's only, so refuse (NOTE [vmap and rules])
            raise RawValueRead(_SAMPLE_ARRAY)
    if params:
        level, plevel = _param_levels(params, level)
    if level < 0:
        return _pd.MISS
    if target is not None:
        return _interpret_inplace(prim, target, inputs, params, cast, level, plevel)
    decomp = DECOMPOSITIONS.get(prim.name)
    if decomp is not None and STATE.grad_enabled and any(t._requires_grad for t in inputs):
        out = decomp(*inputs, **params)
        if out is not None:
            return out
    outs = _run_batched(prim, inputs, params, cast, level, plevel == level)
    if prim.view and type(inputs[0]) is BatchedTensor:
        _dispatch.mark_views(inputs[0], outs, prim, params)
    for rec in STATE.recorders:
        rec.record(prim, inputs, params, outs, cast)
    return outs[0] if prim.num_outputs == 1 else outs


def _run_batched(prim: Any, inputs: tuple, params: dict, cast: Any, level: int,
                 param_batched: bool) -> tuple:
    """`param_batched`: a tensor of `level` sits in a parameter (the per-sample fallback)."""
    levels = current_levels()
    size = levels[-1][1] if levels and levels[-1][0] == level else _batch_size(level)
    args, flags = [], []
    for t in inputs:  # `unwrap`, inlined: this runs once per batched op
        if type(t) is BatchedTensor and t._bt_level == level:
            args.append(t._bt_value)
            flags.append(True)
        else:
            args.append(t)
            flags.append(False)
    rule = prim.batch
    if rule is None:  # per-arity variants of cat/stack share the registered one's rule
        base = PRIMITIVES.get(prim.name)
        rule = base.batch if base is not None else None
    if rule is None or param_batched:
        res = loop(prim, args, flags, params, cast, size, level)
    else:
        res = rule(prim, args, flags, params, cast, size, level)
    if prim.num_outputs == 1:
        return (wrap(res, level),)
    return tuple(wrap(r, level) for r in res)


_INPLACE = ("vmap: inplace arithmetic(self, *extra_args) is not possible because there exists "
            "a Tensor `other` in extra_args that has more elements than `self`. This happened "
            "due to `other` being vmapped over but `self` not being vmapped over in a vmap. "
            "Please try to use out-of-place operators instead of inplace arithmetic. If said "
            "operator is being called inside the PyTorch framework, please file a bug report "
            "instead.")


def _become(t: Tensor, phys: Tensor, level: int) -> None:
    t.__class__ = BatchedTensor  # same layout: Tensor's slots plus the instance dict
    t._bt_value, t._bt_level = phys, level  # type: ignore[attr-defined]
    t._data = _sample0(phys)
    t._data._owner = _weakref(t)


def _promote(target: Tensor, level: int) -> None:
    """Give an unbatched tensor (and the base it views) a batch dimension, in place.

    PyTorch's backward formulas make their zero buffers with ``grad.new_zeros``, batched when
    the gradient is; hookgrad's make plain zeros and ``copy_`` the gradient into a view of
    them, so inside backward such a buffer is promoted instead of refused.
    """
    from hookgrad._ops._batching import expand_batch

    base = target._base if target._base is not None else target
    size = _batch_size(level)
    phys = expand_batch(base.detach(), False, size).clone()
    _become(base, phys, level)
    base._version_counter = phys._vc()
    if target is base:
        return
    view = base
    for prim, params, i in target._view_chain:
        out = _dispatch.bind(prim, (view,), params)
        view = out[i] if isinstance(out, tuple) else out
    _become(target, view._bt_value, level)
    target._version_counter = base._version_counter


def _fresh(t: Tensor) -> bool:
    """A zero tangent buffer forward AD made for an in-place write (batched as needed)."""
    base = t._base if t._base is not None else t
    return base.__dict__.get("_fresh_buffer", False)


def _interpret_inplace(prim: Any, target: Tensor, inputs: tuple, params: dict, cast: Any,
                       level: int, plevel: int) -> Tensor:
    """An in-place op with a batched input: out of place by the rule, then a batched write."""
    phys_target, batched = unwrap(target, level)
    if not batched and (STATE.graph_task_stack or _fresh(target)):
        _promote(target, level)  # a rule writing a batched grad/tangent into fresh zeros
        phys_target, batched = unwrap(target, level)
    if not batched:
        raise RuntimeError(_INPLACE)
    out = _run_batched(prim, inputs, params, cast, level, plevel == level)[0]
    if tuple(out._data.shape) != tuple(target._data.shape):
        raise RuntimeError(
            f"output with shape {list(target.shape)} doesn't match the broadcast shape "
            f"{list(out.shape)}")
    recorders = STATE.all_recorders
    for rec in recorders:
        rec.record_inplace(prim, inputs, params, out, target, cast)
    phys_out = out._bt_value
    if phys_out.dtype != phys_target.dtype:
        phys_out = phys_out.to(phys_target.dtype)
    # the write itself is a physical ``copy_``: an outer grad or vmap level sees it
    _dispatch.bind_inplace(PRIMITIVES["copy_"], phys_target, (phys_target, phys_out))
    for rec in recorders:
        rec.rebase(target, out)
    return target
