"""`RulePlan`: what the grad recorder and `PrimitiveNode.apply` derive from a primitive once.

NOTE [Rule plans]
A rule names the values it wants by parameter name (NOTE [Rule arguments] in registry.py).
Resolving those names on every call (string tests against saved values, params, ``_shape``
suffixes...) cost more than many rules themselves, so each rule gets a *caller* when its
primitive is first recorded: a one-line function, generated from the rule's parameter names,
that reads each value straight from where it lives and calls the rule positionally. For
``mul``'s rule ``lambda grad, other, self_shape: ...`` it is::

    lambda grad, grads, saved, params, meta: rule(grad, saved.get('other'), meta[0][0])

Names resolve in the order they were validated in: ``grad``/``grads``, a saved value (``None``
when the input whose rule uses it needs no gradient, so it was not saved), a param (its default
when absent), ``<input>_shape``, ``<input>_dtype``. Generating the code (as `dataclasses` and
`collections.namedtuple` do) is what makes this cheaper than any table-driven argument loop.
The recorder's save lists, per set of inputs needing a gradient, are cached here too.

A rule that takes ``ops`` (NOTE [Rule operations] in _rule_ops.py) gets two callers: the tensor
caller passes `TENSOR_OPS` and tensors, as above; the array caller passes `ARRAY_OPS`, the
arrays of ``grad``/``grads`` and of the saved values, and wraps the array the rule returns into
a tensor with no history::

    def call(grad, grads, saved, params, meta):
        r = rule(grad._data, (v if type(v := saved.get('other')) is _nd else
                              v._data if type(v) is _T else _arr(v)), meta[0][0], AOPS)
        if type(r) is _nd:
            return _make(r)
        return r if r is None else _wrap(r)

`PrimitiveNode.apply` picks the array callers when the engine chose arrays for the pass. A rule
without ``ops`` has one caller for both (it always computes on tensors). When every rule of a
node takes ``ops``, `apply` unpacks the saved values as arrays (`SavedTensor.unpack_data`),
which the array caller's first test passes through.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from hookgrad._dtypes import from_numpy_dtype
from hookgrad._ops._rule_ops import ARRAY_OPS, TENSOR_OPS, as_array, bind_tensor_methods
from hookgrad._ops.registry import Primitive
from hookgrad._tensor import Tensor

_make = Tensor._make


class RulePlan:
    """Per-primitive precomputed data of the backward hot path (NOTE [Rule plans])."""

    __slots__ = ("cls", "callers", "array_callers", "single", "uses", "save_lists", "meta_all",
                 "saved_as_arrays", "packs_indices", "same_uses")

    def __init__(self, prim: Primitive, cls: type) -> None:
        self.cls = cls  # the PrimitiveNode subclass named after the node
        bind_tensor_methods()  # the public API is imported by the time a node is recorded
        names = [prim.inputs[i] for i in prim.diff_inputs]
        self.callers = tuple(rule_caller(prim, name) for name in names)
        self.array_callers = tuple(
            rule_caller(prim, name, arrays=True) if "ops" in prim.rule_args[name] else call
            for name, call in zip(names, self.callers, strict=True))
        # one output that is always differentiable: the recorder's single-output fast path
        self.single = prim.num_outputs == 1 and not prim.nondifferentiable_outputs
        # per diff input: the saved names its rule uses
        self.uses = tuple(frozenset(prim.uses[name]) for name in names)
        self.save_lists: dict[int, tuple] = {}  # edge bitmask -> ((name, source), ...)
        self.meta_all = len(prim.diff_inputs) == len(prim.inputs)
        # every rule runs on arrays in array mode: saved values are unpacked as arrays then
        self.saved_as_arrays = all("ops" in prim.rule_args[name] for name in names)
        # advanced indexing saves its index tensors, which are a param (NOTE [Index params])
        self.packs_indices = "indices" in prim.params
        self.same_uses = len(set(self.uses)) <= 1  # one joint save list (or one diff input)

    def saves_for(self, prim: Primitive, mask: int) -> tuple:
        """``(name, source)`` to save when the diff inputs in bitmask `mask` need gradients.

        Source: an input position, ``-1`` for ``result``, ``-2`` for ``results``, ``-10 - k``
        for ``result<k>``. Order is ``prim.saves``: the pack order of saved-tensor hooks.
        """
        out = self.save_lists.get(mask)
        if out is None:
            # PyTorch's generated code guards a saved value by `should_compute_output` only
            # when exactly one input's formula uses it: values several formulas share (and
            # every value of a single-input node) are saved unconditionally
            wanted: set = set()
            seen: set = set()
            for k, names in enumerate(self.uses):
                if mask >> k & 1 or len(self.uses) == 1:
                    wanted |= names
                wanted |= seen & names
                seen |= names
            out = tuple((name, _source(prim, name)) for name in prim.saves if name in wanted)
            self.save_lists[mask] = out
        return out


def _source(prim: Primitive, name: str) -> int:
    if name == "result":
        return -1
    if name == "results":
        return -2
    if name in prim.inputs:
        return prim.inputs.index(name)
    return -10 - int(name[6:])  # result<k>


def rule_caller(prim: Primitive, name: str, arrays: bool = False) -> Any:
    """``caller(grad, grads, saved, params, meta)`` calling `name`'s VJP rule (see the NOTE).

    With `arrays`, the caller of an ``ops`` rule in array mode.
    """
    args = ", ".join(_expression(prim, a, arrays) for a in prim.rule_args[name])
    scope = {"rule": prim.vjp[name], "defaults": dict(prim.defaults), "dtype": from_numpy_dtype,
             "AOPS": ARRAY_OPS, "TOPS": TENSOR_OPS, "_arr": saved_arrays, "_nd": np.ndarray,
             "_wrap": _wrap, "_make": _make, "_T": Tensor}
    if not arrays:
        return eval(f"lambda grad, grads, saved, params, meta: rule({args})", scope)  # noqa: S307
    code = (f"def call(grad, grads, saved, params, meta):\n"
            f"    r = rule({args})\n"
            f"    if type(r) is _nd:\n"
            f"        return _make(r)\n"
            f"    return r if r is None else _wrap(r)\n")
    exec(code, scope)  # noqa: S102
    return scope["call"]


def saved_arrays(v: Any) -> Any:
    """The array(s) of a saved value or of ``grads``: a tensor, None, or a tuple of them.

    Values `PrimitiveNode.apply` unpacked as arrays already (of any backend) pass unchanged.
    """
    if v is None:
        return None
    if type(v) is tuple:
        return tuple(x._data if isinstance(x, Tensor) else x for x in v)
    return v._data if isinstance(v, Tensor) else v


def _wrap(r: Any) -> Tensor:
    """An array an ``ops`` rule returned in array mode, as a tensor with no history."""
    return _make(as_array(r))


def _expression(prim: Primitive, arg: str, arrays: bool) -> str:
    """The Python expression reading rule argument `arg` (names were validated by defop)."""
    if arg == "ops":
        return "AOPS" if arrays else "TOPS"
    if arg in ("grad", "grads"):
        if arrays:
            return "grad._data" if arg == "grad" else "_arr(grads)"
        return arg
    if arg in prim.saves:
        if arrays:  # an array or a tensor's array inline; None and tuples through `_arr`
            return (f"(v if type(v := saved.get({arg!r})) is _nd else "
                    f"v._data if type(v) is _T else _arr(v))")
        return f"saved.get({arg!r})"
    if arg in prim.params:
        return f"params.get({arg!r}, defaults.get({arg!r}))"
    if arg.endswith("_shape"):
        return f"meta[{prim.inputs.index(arg[:-6])}][0]"
    if arg.endswith("_dtype"):
        return f"dtype(meta[{prim.inputs.index(arg[:-6])}][1])"
    raise KeyError(arg)  # pragma: no cover - defop validated every name


__all__ = ["RulePlan", "rule_caller", "saved_arrays"]
