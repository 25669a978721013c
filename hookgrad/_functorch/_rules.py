"""Backward rules of nodes whose values are batched (NOTE [vmap and rules]).

NOTE [vmap and rules]
Inside ``vmap(grad(f))`` the autograd graph is built on BatchedTensors and its VJP rules run on
them: a rule written with hookgrad ops batches op by op. A few rules also read raw values to
build constants (a mask from ``x._data < 0``, the class picked by an integer target). The
logical array of a BatchedTensor (`LogicalArray`) refuses every value read (``RawValueRead``),
so such a rule cannot silently use sample 0 for every sample: `run_rules` catches the refusal
and runs the node's rules once per sample (the vmap fallback, applied to a rule), stacking
the per-sample gradients. Rules that read only shapes and dtypes run batched.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from hookgrad.autograd._nodes import call_rules

__all__ = ["LogicalArray", "RawValueRead", "run_rules", "run_jvp"]


LEVELS: list = [None, None]  # (batch size of a level, wrap): given by _batched (no cycle)


class RawValueRead(RuntimeError):
    """A raw value of a vmap-batched tensor was read (caught by `run_rules`)."""


_META = frozenset({np.shape, np.ndim, np.size, np.result_type, np.can_cast,
                   np.broadcast_shapes, np.iscomplexobj, np.isrealobj})


_LIKE = frozenset({np.zeros_like, np.ones_like, np.empty_like, np.full_like})


def _refuse(*args: Any, **kwargs: Any) -> Any:
    raise RawValueRead(
        "vmap: a raw value of a batched tensor was read outside a primitive (hookgrad reads "
        "values only through primitives under vmap)")


# NumPy comparisons and boolean ufuncs a backward rule builds its constant masks with, as
# hookgrad Tensor methods (NOTE [Masks of batched values])
_MASKS = {np.greater: "gt", np.greater_equal: "ge", np.less: "lt", np.less_equal: "le",
          np.equal: "eq", np.not_equal: "ne", np.logical_and: "logical_and",
          np.logical_or: "logical_or", np.bitwise_and: "logical_and",
          np.bitwise_or: "logical_or"}
_NOT = (np.logical_not, np.invert)


def _operand(x: Any) -> Any:
    owner = getattr(x, "_owner", None)
    if owner is not None:
        t = owner()
        if t is not None:
            return t
    if type(x) is LogicalArray:
        _refuse()  # a sample's array without its tensor (a view of it): no batched meaning
    if isinstance(x, (np.ndarray, np.generic)):  # an unbatched operand's array
        from hookgrad._tensor import Tensor

        return Tensor._make(np.asarray(x))
    return x


def _mask(ufunc: Any, inputs: tuple) -> Any:
    """NOTE [Masks of batched values]: a rule's ``self._data >= m`` on a batched value is
    the same comparison of the batched tensor, run as ops (so it batches, and a reverse pass
    over the rule's result sees it); the result is that tensor's logical array, which `keep`
    and `drop` turn back into the tensor. Other value reads still refuse."""
    args = [_operand(x) for x in inputs]
    first = next(a for a in args if hasattr(a, "_bt_value"))
    if ufunc in _NOT:
        return _held(first.logical_not())
    a, b = args
    if hasattr(a, "_bt_value"):
        return _held(getattr(a, _MASKS[ufunc])(b))
    flip = {"gt": "lt", "ge": "le", "lt": "gt", "le": "ge"}.get(_MASKS[ufunc], _MASKS[ufunc])
    return _held(getattr(b, flip)(a))


def _held(t: Any) -> Any:
    """`t`'s logical array, holding `t` (a mask is a temporary: a weak owner would die)."""
    arr = t._data
    arr._owner = lambda: t
    return arr


class LogicalArray(np.ndarray):
    """The metadata of one sample of a batched tensor; any read of its values raises."""

    def __array_ufunc__(self, ufunc: Any, method: str, *inputs: Any, **kwargs: Any) -> Any:
        if method == "__call__" and not kwargs and (ufunc in _MASKS or ufunc in _NOT):
            return _mask(ufunc, inputs)
        _refuse()

    def __array_function__(self, func: Any, types: Any, args: Any, kwargs: Any) -> Any:
        if func in _META:
            return super().__array_function__(func, types, args, kwargs)
        if func in _LIKE:  # shape and dtype only: a plain (unbatched) array
            return func(np.ndarray.view(args[0], np.ndarray), *args[1:], **kwargs)
        _refuse()

    item = tolist = tobytes = __bool__ = __float__ = __int__ = __index__ = _refuse
    __array__ = _refuse


def _level_of(values: Any, tangents: bool = True) -> int:
    level = -1
    for v in values:
        if type(v) in (tuple, list):
            level = max(level, _level_of(v, tangents))
        else:
            lv = getattr(v, "_bt_level", -1)
            if lv is not None and lv > level:
                level = lv
            tans = _tangents(v) if tangents and hasattr(v, "_fw_grads") else None
            if tans:  # a tangent batched at a deeper level (a jacfwd's basis) is picked first
                level = max(level, _level_of(list(tans.values())))
    return level


def _pick(v: Any, level: int, i: int) -> Any:
    if type(v) in (tuple, list):
        return type(v)(_pick(e, level, i) for e in v)
    tans = _tangents(v) if hasattr(v, "_fw_grads") else {}
    if getattr(v, "_bt_level", None) == level:
        out = v._bt_value[i]
    elif any(getattr(t, "_bt_level", None) == level for t in tans.values()):
        from hookgrad.autograd.forward_ad import primal_alias

        out = primal_alias(v)  # the value is shared; its tangent is picked
    else:
        return v
    for fl, tan in tans.items():  # forward-over-reverse inside vmap (a hessian): the
        _set_tangent(out, fl, _pick(tan, level, i))  # sample keeps its tangents
    return out


def _tangents(v: Any) -> dict:
    """The forward-AD tangents a logical value carries (they live on the wrapper, not on its
    physical value, when the dual level is inside the vmap level)."""
    from hookgrad.autograd.forward_ad import OPEN, tangents_of

    return tangents_of(v) if OPEN else {}


def _set_tangent(t: Any, level: int, tan: Any) -> None:
    from hookgrad.autograd import forward_ad

    forward_ad._set_tangent(t, level, tan)


def _stack_rows(col: list, level: int, tangent_only: bool) -> Any:
    """The per-sample results as one value of `level`, their tangents stacked alike.
    `tangent_only`: only the tangents were batched at `level` (a jacfwd basis), so the rows'
    values are one value, and only their tangents are stacked."""
    from hookgrad._functional.shape import stack
    from hookgrad.autograd.forward_ad import primal_alias

    wrap = LEVELS[1]
    if tangent_only:
        out = primal_alias(col[0])
        for fl in _tangents(col[0]):
            rows = [_tangents(c).get(fl) for c in col]
            if all(r is not None for r in rows):
                _set_tangent(out, fl, wrap(stack(rows, 0), level))
        return out
    phys = stack(col, 0)
    out = wrap(phys, level)
    for fl, tan in _tangents(phys).items():
        _set_tangent(out, fl, wrap(tan, level))
    return out


def run_rules(node: Any, grad: Any, grads: Any, saved: Any, callers: Any, edges: Any,
              needed: Any) -> tuple:
    """The gradients of `node`'s inputs, batched rules first, per sample if they must be."""
    try:
        return call_rules(node, grad, grads, saved, callers, edges, needed)
    except RawValueRead as exc:
        refused = exc
    values = [grad, grads] + (list(saved.values()) if saved else [])
    level = _level_of(values)
    if level < 0:
        raise refused
    size = LEVELS[0](level)
    tangent_only = level > _level_of(values, tangents=False)
    rows = []
    for i in range(size):
        sv = {k: _pick(v, level, i) for k, v in saved.items()} if saved else saved
        rows.append(run_rules(node, _pick(grad, level, i), _pick(grads, level, i), sv,
                              callers, edges, needed))  # a value batched at an outer level
    out = []
    for k in range(len(rows[0]) if rows else 0):
        col = [r[k] for r in rows]
        out.append(None if col[0] is None else _stack_rows(col, level, tangent_only))
    return tuple(out)


def run_jvp(prim: Any, inputs: tuple, params: dict, outs: tuple, tans: list,
            fw_level: int = 0) -> tuple:
    """Output tangents of one call, batched rules first, per sample if they must be (the
    forward-mode twin of `run_rules`)."""
    from hookgrad.autograd.forward_ad import compute_jvp

    try:
        return compute_jvp(prim, inputs, params, outs, tans, fw_level)
    except RawValueRead as exc:
        refused = exc
    level = _level_of(list(inputs) + list(outs) + [t for t in tans if t is not None])
    if level < 0:
        raise refused
    from hookgrad._functional.shape import stack

    batch_size, wrap = LEVELS
    rows = []
    for i in range(batch_size(level)):
        rows.append(run_jvp(prim, _pick(tuple(inputs), level, i),  # nested levels: again
                                {k: _pick(v, level, i) for k, v in params.items()},
                                _pick(tuple(outs), level, i),
                                [None if t is None else _pick(t, level, i) for t in tans],
                                fw_level))
    return tuple(None if col[0] is None else wrap(stack(list(col), 0), level)
                 for col in zip(*rows))
