"""The derivative of one graph node, traced from the op table's own VJP rules (NOTE [Traced
derivatives]).

NOTE [Traced derivatives]
Generated backward code does not restate derivatives. A node's derivative is found by running
the node once on stand-in tensors with a recorder on the thread's stack (the core's one door,
`hookgrad._config.Recorder`): the node's forward reports the primitives it is made of (one
for a primitive node; ``t`` then ``addmm`` for ``F.linear``), then each of those primitives'
registered VJP rules runs, in reverse, with `RECORDED_OPS` (NOTE [Rule operations]: the
formulas of a pass that builds no graph, as hookgrad ops the recorder sees). What the recorder
saw is a `Derivative`: a few primitive `Step`s over the node's arguments, its result, its
output gradient and numbers, and which step gives each argument's gradient. `lower` writes it
out with the forward lowering (`pointwise`): an elementwise primitive's inline source, any
other primitive as a call of its impl (eager's array path), so NumPy code and Numba kernels
compute what the rules compute.

A derivative is only used where it holds for every value of the node's shapes and dtypes (the
program is specialised on those):
- it is traced twice: on ``meta`` tensors (shapes, no data: a rule that reads values, for a
  mask or a branch, raises there) and on tensors of ones (which give the values of the Python
  numbers the rules use); the two recordings must be the same steps;
- every tensor a step reads is a node argument, its result, the gradient, an earlier step's
  output or a wrapped Python number; anything else (a constant made outside `bind`, an
  in-place write, a cast, several outputs) refuses the trace.
A refused node keeps a call of its rules at run time (`backward.generic_vjp`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from hookgrad._config import STATE, set_grad_mode, set_recorders
from hookgrad._dtypes import from_numpy_dtype
from hookgrad._meta import META
from hookgrad._ops._rule_ops import RECORDED_OPS
from hookgrad._ops.registry import Primitive
from hookgrad._tensor import Tensor
from hookgrad.autograd._nodes import _PLANS, plan_of
from hookgrad.compile.codegen.pointwise import forward_expr, lowerable
from hookgrad.compile.trace.recorder import PrimCall
from hookgrad.utils import _python_dispatch as _pd

__all__ = ["Step", "Derivative", "derivative", "lower", "NotLowerable"]

_make = Tensor._make


class NotLowerable(Exception):
    """A derivative step without an inline form where one is required (a Numba kernel)."""


class _Refused(Exception):
    """The trace left the recorded world (see the NOTE)."""


@dataclass(frozen=True)
class Step:
    """One primitive call of a derivative. Its arguments are references: ``("arg", k)``,
    ``("result",)``, ``("grad",)``, ``("step", j)`` or ``("num", value)``."""

    prim: Primitive
    args: tuple
    params: dict


@dataclass(frozen=True)
class Derivative:
    """The traced derivative of a node (see the NOTE)."""

    steps: tuple[Step, ...]
    grads: tuple  # per node argument: the reference of its gradient, or None
    shapes: tuple  # per node argument: its gradient's shape (None without one)
    forward: int  # the first `forward` steps are the node's forward (the last one: its result)

    def edges(self) -> tuple[list, list]:
        """``(direct, further)``: the argument positions the result's primitive reads, in its
        input order (its autograd node's edges), and those reached through one more forward
        step (``F.linear``'s weight, through ``t``)."""
        final = self.steps[self.forward - 1]
        direct = [r[1] for r in final.args if r[0] == "arg"]
        further: list[int] = []
        todo = [r for r in final.args if r[0] == "step"]
        while todo:
            r = todo.pop(0)
            if r[0] == "step":
                todo += self.steps[r[1]].args
            elif r[0] == "arg" and r[1] not in direct + further:
                further.append(r[1])
        return direct, further


_CACHE: dict[Any, Derivative | None] = {}


def derivative(target: Any, metas: tuple) -> Derivative | None:
    """The derivative of a node calling `target` on arguments of `metas` (``(shape, dtype)``
    each), or None where it cannot be traced (see the NOTE)."""
    key = _key(target, metas)
    if key is not None and key in _CACHE:
        return _CACHE[key]
    if _pd.ACTIVE[0] or (type(target) is PrimCall and target.cast is not None):
        return None  # a dispatch mode or vmap would see (or answer) the trace's ops
    shape_only = _trace(target, metas, lambda shape, dtype: META.xp.empty(shape, dtype))
    found = shape_only and _trace(target, metas, np.ones)
    if found is not None and not _same_steps(shape_only, found):
        found = None
    if key is not None:
        if len(_CACHE) >= 4096:  # bounded: programs with ever-new shapes
            _CACHE.clear()
        _CACHE[key] = found
    return found


def _key(target: Any, metas: tuple) -> Any:
    try:
        head = ((target.prim, target.cast, tuple(sorted(target.params.items())))
                if type(target) is PrimCall else target)
        key = (head, tuple((tuple(s), np.dtype(d).str) for s, d in metas))
        hash(key)
    except TypeError:  # unhashable params: traced each time
        return None
    return key


class _Recorder:
    """Records the primitives of one trace as steps (the recorder protocol of `_config`)."""

    sees_backward = True

    def __init__(self, leaves: list) -> None:
        self.refs: dict[int, tuple] = {id(t): ("arg", k) for k, t in enumerate(leaves)}
        self.steps: list[Step] = []
        self.calls: list[tuple] = []  # (prim, inputs, params, output) of each step
        self.keep: list[Any] = list(leaves)  # traced tensors stay alive: ids stay unique

    def ref(self, t: Any) -> tuple:
        r = self.refs.get(id(t))
        if r is not None:
            return r
        if isinstance(t, Tensor) and t._wrapped_number:
            self.keep.append(t)
            return ("num", t._data)
        raise _Refused("a tensor made outside the recorded primitives")

    def record(self, prim: Any, inputs: tuple, params: dict, outputs: tuple,
               cast: Any = None) -> None:
        if cast is not None or len(outputs) != 1:
            raise _Refused("a cast or several outputs")
        self.steps.append(Step(prim, tuple(self.ref(t) for t in inputs), dict(params)))
        self.calls.append((prim, inputs, params, outputs[0]))
        self.refs[id(outputs[0])] = ("step", len(self.steps) - 1)
        self.keep.append(outputs[0])

    def record_inplace(self, *args: Any) -> None:
        raise _Refused("an in-place write")

    def rebase(self, target: Any, out: Any) -> None:
        raise _Refused("an in-place write")

    def record_write(self, target: Any) -> None:
        raise _Refused("a write outside primitives")

    def record_function(self, fn_cls: Any, inputs: tuple, outputs: tuple) -> None:
        raise _Refused("a custom Function")


def _trace(target: Any, metas: tuple, make: Callable) -> Derivative | None:
    leaves = [_make(make(tuple(shape), dtype)) for shape, dtype in metas]
    rec = _Recorder(leaves)
    stack, grad_mode = STATE.stack, STATE.grad_enabled
    set_grad_mode(False)  # no autograd graph: the recorder alone sees the ops
    set_recorders((rec,))  # alone: an outer tracer must not see the trace's ops
    try:
        with np.errstate(all="ignore"):
            out = target(*leaves)
            if not isinstance(out, Tensor) or not rec.calls or rec.calls[-1][3] is not out:
                return None
            forward = len(rec.steps)
            grad = _make(make(out._data.shape, out._data.dtype))
            rec.refs[id(out)], rec.refs[id(grad)] = ("result",), ("grad",)
            grads = _backward(rec.calls, out, grad)
            found = [grads.get(id(t)) for t in leaves]
            refs = tuple(None if g is None else rec.ref(g) for g in found)
    except Exception:  # noqa: BLE001 - refused (see the NOTE): the rules run at run time
        return None
    finally:
        set_recorders(stack)
        set_grad_mode(grad_mode)
    shapes = tuple(None if g is None else g._data.shape for g in found)
    return Derivative(tuple(rec.steps), refs, shapes, forward)


def _backward(calls: list, out: Tensor, grad: Tensor) -> dict:
    """``{id(tensor): gradient}``: the rules of the node's primitives, last first. A value
    read by two of them would need its gradients summed: refused (no node lowers to that)."""
    grads = {id(out): grad}
    for prim, inputs, params, output in reversed(list(calls)):
        g = grads.pop(id(output), None)
        if g is None:
            continue
        for k, r in _rules(prim, inputs, params, output, g):
            if r is not None:
                if id(inputs[k]) in grads:
                    raise _Refused("a value read twice")
                grads[id(inputs[k])] = r
    return grads


def _rules(prim: Primitive, inputs: tuple, params: dict, output: Tensor, grad: Tensor) -> list:
    """``(input position, gradient)`` of each input with a rule, by the registered rules."""
    plan = _PLANS.get(prim) or plan_of(prim)
    saved: dict[str, Any] = {}
    for name, src in plan.saves_for(prim, (1 << len(prim.diff_inputs)) - 1):
        if src < -1:
            raise _Refused("a rule reading several outputs")
        saved[name] = output if src == -1 else inputs[src]
    meta = tuple((t._data.shape, t._data.dtype) for t in inputs)
    out = []
    for k in prim.diff_inputs:
        name = prim.inputs[k]
        args = [_argument(prim, a, grad, saved, params, meta) for a in prim.rule_args[name]]
        out.append((k, prim.vjp[name](*args)))
    return out


def _argument(prim: Primitive, name: str, grad: Tensor, saved: dict, params: dict,
              meta: tuple) -> Any:
    """Rule argument `name` (NOTE [Rule arguments] in registry.py), with `RECORDED_OPS`."""
    if name == "ops":
        return RECORDED_OPS
    if name in ("grad", "grads"):
        return grad if name == "grad" else (grad,)
    if name in prim.saves:
        return saved.get(name)
    if name in prim.params:
        return params.get(name, prim.defaults.get(name))
    if name.endswith("_shape"):
        return meta[prim.inputs.index(name[:-6])][0]
    return from_numpy_dtype(meta[prim.inputs.index(name[:-6])][1])  # ``<input>_dtype``


def _same_steps(a: Derivative, b: Derivative) -> bool:
    """The two recordings agree (numbers compared by presence: only ones give values)."""
    def shape(r: Any) -> Any:
        return r if r is None or r[0] != "num" else ("num",)
    try:
        return (len(a.steps) == len(b.steps) and a.shapes == b.shapes and a.forward == b.forward
                and [shape(r) for r in a.grads] == [shape(r) for r in b.grads]
                and all(x.prim is y.prim and bool(x.params == y.params)
                        and [shape(r) for r in x.args] == [shape(r) for r in y.args]
                        for x, y in zip(a.steps, b.steps)))
    except Exception:  # noqa: BLE001 - params that do not compare: not the same
        return False


# ---------------------------------------------------------------- lowering
@dataclass
class Names:
    """How `lower` writes what a derivative reads."""

    args: list  # the node's argument sources
    result: str
    grad: str
    number: Callable[[Any], str]  # a numeric constant (a 0-d array or a param value)
    # a primitive without inline form, on argument sources (None: refused)
    call: Callable[[Primitive, dict, list], str] | None
    temp: Callable[[], str]  # a fresh local name
    consts: dict | None = None  # the kernel's constant names (Numba kernels), else None


def lower(d: Derivative, wanted: list, names: Names) -> tuple[list[str], dict]:
    """``(lines, {argument position: gradient source})`` for the arguments in `wanted` that get
    a gradient. Steps read once are written inline; steps read more often get a local name."""
    uses: dict[int, int] = {}
    roots = [d.grads[k] for k in wanted if d.grads[k] is not None]
    todo = [r for r in roots if r[0] == "step"]
    while todo:  # the steps the wanted gradients read (every step's use counted)
        r = todo.pop()
        uses[r[1]] = uses.get(r[1], 0) + 1
        if uses[r[1]] == 1:
            todo += [a for a in d.steps[r[1]].args if a[0] == "step"]
    lines: list[str] = []
    srcs: dict[int, str] = {}

    def source(r: tuple) -> str:
        kind = r[0]
        if kind == "step":
            return srcs[r[1]]
        if kind == "arg":
            return names.args[r[1]]
        if kind == "num":
            return names.number(r[1])
        return names.result if kind == "result" else names.grad

    for j, step in enumerate(d.steps):
        if j not in uses:
            continue
        expr = _step_source(step, [source(a) for a in step.args], names)
        if uses[j] > 1:
            tmp = names.temp()
            lines.append(f"{tmp} = {expr}")
            expr = tmp
        srcs[j] = expr
    return lines, {k: source(d.grads[k]) for k in wanted if d.grads[k] is not None}


def _step_source(step: Step, args: list, names: Names) -> str:
    scalar = names.consts is not None
    if lowerable(step.prim, step.params, scalar):
        return forward_expr(step.prim.name, args, step.params, names.consts,
                            names.number if scalar else repr)
    if scalar or names.call is None:
        raise NotLowerable(step.prim.name)
    return names.call(step.prim, step.params, args)
