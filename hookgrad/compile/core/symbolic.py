"""Symbolic sizes and scalars of a dynamic trace (spec §6.3).

NOTE [Symbolic numbers]
In a dynamic trace the user's code still runs on real values (NOTE [Execution tracing] in
`tracer`), but a size of a dynamic dimension, and an int or float argument that became dynamic,
is handed to it as a `SymInt`/`SymFloat`: a number-like object carrying its concrete value,
the graph node computing it at run time and, when it derives only from the call's arguments,
an ``expr(ctx)`` that recomputes it from a call's arguments (what a guard evaluates).

They are deliberately *not* ``int``/``float`` subclasses (PyTorch's ``SymInt`` is not either):
CPython reads an int subclass's value directly in C (``lst[n]``, ``math.exp(f)``, slicing a
list), which would bake the trace's value with no guard, a silently wrong graph for the next
value. As separate classes every such use goes through ``__index__``/``__float__``/``__int__``,
which specialise (below). The price: ``isinstance(n, int)`` is false inside a dynamic trace.

* Arithmetic between symbolic numbers and constants records a node (``operator.mul``...) and
  returns a new symbolic number: ``x.shape[0] // 2`` stays symbolic.
* With anything but a number (a tensor outside a recorded call, a list), arithmetic uses the
  concrete value, specialised: a symbolic number that outlives its trace (stored on a custom
  Function's ``ctx`` after a graph break, say) still computes.
* Using one where Python needs a concrete answer (``if n > 3``, ``bool(n)``, ``int(n)``,
  ``range(n)``, ``lst[n]``, ``d[n]``, ``math.sqrt(n)``) *specialises* it: the real answer is
  returned and a guard records that a later call must give the same answer
  (``L['n'] > 3 == False``). A number read from an intermediate tensor's size has no ``expr``
  (it cannot be computed before the graph runs): specialising it is a graph break, so the call
  runs eagerly and stays correct for every size.
* Handed to a hookgrad function or tensor method, a symbolic number makes the call one graph
  node that recomputes the call with the run-time value (`composite`), so shape parameters
  derived inside hookgrad are never baked.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable
from typing import Any

from hookgrad._dtypes import Size
from hookgrad.compile.core.state import current_trace

__all__ = ["SymInt", "SymFloat", "SymNum", "make_sym", "is_sym", "plain", "specialised",
           "node_or_value"]

_SPECIALISE_BREAK = ("a size of an intermediate tensor was used in Python control flow in a "
                     "dynamic-shape trace (it cannot be guarded before the graph runs)")


def is_sym(value: Any) -> bool:
    return isinstance(value, SymNum)


def _map_numbers(value: Any, leaf: Any) -> Any:
    """`value` with `leaf` applied to every symbolic number in it (containers walked)."""
    if isinstance(value, SymNum):
        return leaf(value)
    kind = type(value)
    if kind is tuple or kind is list:
        return kind(_map_numbers(v, leaf) for v in value)
    if isinstance(value, Size):
        return Size([_map_numbers(v, leaf) for v in value])
    if kind is dict:
        return {k: _map_numbers(v, leaf) for k, v in value.items()}
    if kind is slice:
        return slice(_map_numbers(value.start, leaf), _map_numbers(value.stop, leaf),
                     _map_numbers(value.step, leaf))
    return value


def _concrete(num: SymNum) -> Any:
    return num.value


def plain(value: Any) -> Any:
    """`value` with every symbolic number replaced by its concrete value (containers walked)."""
    return _map_numbers(value, _concrete)


def specialised(value: Any) -> Any:
    """Like `plain`, but every symbolic number met is specialised (guarded): for values that
    reach code which does not record them (a hook body being speculated, for example)."""
    return _map_numbers(value, _specialise_value)


def node_or_value(value: Any) -> Any:
    """The graph node of a symbolic number, or the (constant) value itself."""
    return value.node if is_sym(value) else value


def _expr_of(value: Any) -> Callable[[Any], Any] | None:
    if is_sym(value):
        return value.expr
    return lambda ctx, v=value: v


def _const_desc(value: Any) -> str:
    return value.desc if is_sym(value) else repr(value)


def make_sym(value: Any, node: Any, expr: Callable[[Any], Any] | None, desc: str) -> Any:
    """A symbolic number of `value`'s type (``bool`` results are never symbolic)."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int):
        sym: Any = SymInt()
        value = int(value)
    elif isinstance(value, float):
        sym = SymFloat()
        value = float(value)
    else:
        return value
    sym.value, sym.node, sym.expr, sym.desc = value, node, expr, desc
    return sym


def _concrete(value: Any) -> Any:
    return value.value if isinstance(value, SymNum) else value


def _recording_trace(*values: Any) -> Any:
    """The trace that records symbolic arithmetic now, or None (then `values` specialise)."""
    tr = current_trace()
    if tr is None or not tr.recording:
        return None
    if tr.sub or tr.rec.suspended:  # a hook body or a composite's inside: concrete values
        for v in values:
            if is_sym(v):
                _specialise_value(v)
        return None
    return tr


def _arith(op: Callable[[Any, Any], Any], a: Any, b: Any) -> Any:
    result = op(_concrete(a), _concrete(b))
    if not isinstance(result, (int, float)) or isinstance(result, bool):
        return result
    tr = _recording_trace(a, b)
    if tr is None:
        return result
    node = tr.rec.graph.call_function(op, (node_or_value(a), node_or_value(b)),
                                      name=op.__name__.strip("_"))
    ea, eb = _expr_of(a), _expr_of(b)
    expr = None if ea is None or eb is None else (lambda ctx: op(ea(ctx), eb(ctx)))
    return make_sym(result, node, expr, f"({_const_desc(a)} {op.__name__} {_const_desc(b)})")


def _unary(op: Callable[[Any], Any], a: Any) -> Any:
    result = op(_concrete(a))
    tr = _recording_trace(a)
    if tr is None:
        return result
    node = tr.rec.graph.call_function(op, (a.node,), name=op.__name__.strip("_"))
    ea = a.expr
    expr = None if ea is None else (lambda ctx: op(ea(ctx)))
    return make_sym(result, node, expr, f"{op.__name__}({a.desc})")


def _specialise(op: Callable[[Any, Any], Any], a: Any, b: Any) -> Any:
    """A comparison used by Python: the real answer, guarded (or a break without `expr`)."""
    result = op(_concrete(a), _concrete(b))
    tr = current_trace()
    if tr is None or not tr.recording:
        return result
    ea, eb = _expr_of(a), _expr_of(b)
    if ea is None or eb is None:
        tr.graph_break(_SPECIALISE_BREAK)
        return result
    tr.add_sym_guard(lambda ctx: op(ea(ctx), eb(ctx)) == result,
                     f"({_const_desc(a)} {op.__name__} {_const_desc(b)}) == {result!r}")
    return result


def _specialise_value(a: Any) -> Any:
    """`a` used as a plain number (``int(n)``, ``range(n)``): guard its exact value."""
    value = _concrete(a)
    tr = current_trace()
    if tr is None or not tr.recording or not is_sym(a):
        return value
    if a.expr is None:
        tr.graph_break(_SPECIALISE_BREAK)
        return value
    expr = a.expr
    tr.add_sym_guard(lambda ctx: expr(ctx) == value, f"{a.desc} == {value!r}")
    return value


def _binary_methods(cls: type) -> None:
    ops = {"add": operator.add, "sub": operator.sub, "mul": operator.mul,
           "floordiv": operator.floordiv, "truediv": operator.truediv, "mod": operator.mod,
           "pow": operator.pow}
    for name, op in ops.items():
        setattr(cls, f"__{name}__", lambda a, b, op=op: _arith(op, a, b) if _number(b)
                else op(_specialise_value(a), b))
        setattr(cls, f"__r{name}__", lambda a, b, op=op: _arith(op, b, a) if _number(b)
                else op(b, _specialise_value(a)))
    for name, op in {"eq": operator.eq, "ne": operator.ne, "lt": operator.lt,
                     "le": operator.le, "gt": operator.gt, "ge": operator.ge}.items():
        setattr(cls, f"__{name}__", lambda a, b, op=op: _specialise(op, a, b) if _number(b)
                else NotImplemented)
    for name, op in {"neg": operator.neg, "abs": operator.abs, "pos": operator.pos}.items():
        setattr(cls, f"__{name}__", lambda a, op=op: _unary(op, a))
    cls.__bool__ = lambda a: _specialise(operator.ne, a, 0)  # type: ignore[attr-defined]
    # every use CPython makes of the number in C asks for its value: specialise (guarded)
    cls.__hash__ = lambda a: hash(_specialise_value(a))  # type: ignore[method-assign]
    cls.__int__ = lambda a: int(_specialise_value(a))  # type: ignore[attr-defined]
    cls.__float__ = lambda a: float(_specialise_value(a))  # type: ignore[attr-defined]
    cls.__complex__ = lambda a: complex(_specialise_value(a))  # type: ignore[attr-defined]
    cls.__round__ = lambda a, *n: round(_specialise_value(a), *n)  # type: ignore[attr-defined]
    for name in ("trunc", "floor", "ceil"):
        fn = getattr(math, name)
        setattr(cls, f"__{name}__", lambda a, fn=fn: fn(_specialise_value(a)))
    # printing shows the value (a print itself is a graph break; messages need no guard)
    cls.__repr__ = lambda a: repr(a.value)  # type: ignore[method-assign]
    cls.__str__ = lambda a: str(a.value)  # type: ignore[method-assign]
    cls.__format__ = lambda a, spec: format(a.value, spec)  # type: ignore[method-assign]
    cls.__reduce__ = lambda a: (type(a.value), (a.value,))  # type: ignore[method-assign]


def _number(value: Any) -> bool:
    return isinstance(value, (int, float, SymNum))


class SymNum:
    """A symbolic number of a dynamic trace (NOTE [Symbolic numbers]).

    Mirrors: ``torch.SymInt`` / ``torch.SymFloat`` (their common behaviour).
    """

    __slots__ = ("value", "node", "expr", "desc")

    value: Any
    node: Any
    expr: Callable[[Any], Any] | None
    desc: str


class SymInt(SymNum):
    """An int of a dynamic trace: a dynamic size or int argument.

    Mirrors: ``torch.SymInt``.
    """

    __slots__ = ()

    def __index__(self) -> int:  # ``lst[n]``, ``range(n)``, NumPy sizes: specialise
        return int(_specialise_value(self))


class SymFloat(SymNum):
    """A float argument of a dynamic trace (PyTorch 2.13 makes float arguments dynamic too).

    Mirrors: ``torch.SymFloat``.
    """

    __slots__ = ()


_binary_methods(SymNum)
