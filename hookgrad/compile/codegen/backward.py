"""Straight-line source for the backward of a joint program (NOTE [Generated backward]).

NOTE [Generated backward]
The backward of a compiled graph is one generated Python function over NumPy arrays:
``backward(env, grads) -> input grads``, where ``env`` is the tuple of every node value the
forward returned and ``grads`` the output gradients (arrays or None). It is generated per
*variant*: which inputs need a gradient and which output gradients are present, both known
when the backward runs, so every branch on them is decided at generation time. Values whose
gradient is not needed are pruned (a value is *live* when it depends on an input that needs a
gradient). The nodes are walked, and the inputs' gradients handed over, in the order eager's
engine would run their nodes (`schedule.backward_order`: the engine's own schedule of stand-in
nodes); each node's total gradient is formed before it is propagated.

Per node, in order of preference:
- a fused elementwise group (`fusion`): one kernel call, at its last member;
- a node whose derivative traces (NOTE [Traced derivatives] in derivative.py): the primitives
  its registered VJP rules call, written with the forward lowering (`pointwise`: inline
  source for elementwise primitives, the impl for others), so the code computes what eager's
  rules compute; shapes are static (the graph is guarded on them and the program is
  specialised on its input shapes), so a broadcast's sum is part of the traced rule;
- any other node: one call of a per-node helper that runs its registered VJP rules on arrays
  (`generic_vjp`; a function of several primitives, ``F.linear``, through the engine), so
  every primitive with rules is supported.
Gradients from several consumers are summed in consumer order (as eager's input buffers do).
A multi-output primitive runs its rules once on its picks' gradients (NOTE [Multi-output
primitives] in items.py).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import partial
from operator import itemgetter
from typing import Any

import numpy as np

from hookgrad._ops._elementwise import unbroadcast_arr
from hookgrad._ops._rule_ops import ARRAY_OPS, as_array, expand_arr
from hookgrad.compile.codegen.derivative import Names, derivative, lower
from hookgrad.compile.codegen.items import carries_grad, multi_output, multi_vjp
from hookgrad.compile.codegen.modhooks import is_setup, run_node
from hookgrad.compile.codegen.nnkernels import fast_impl
from hookgrad.compile.codegen.schedule import backward_order
from hookgrad.compile.codegen.walk import engine_vjp
from hookgrad.compile.core.graph import Node
from hookgrad.compile.trace.recorder import PrimCall

__all__ = ["backward_source", "live_values", "generic_vjp"]


def live_values(prog: Any, needed: tuple) -> set:
    """Positions of the values whose gradient is needed (they depend on a needed input)."""
    live = {i for i, need in zip(prog.inputs, needed) if need}
    for i, node in prog.steps:
        if carries_grad(node) and any(
                isinstance(a, Node) and prog.index[id(a)] in live for a in node.args):
            live.add(i)
    return live


class _Emitter:
    """Accumulates the backward's lines and its namespace."""

    def __init__(self, prog: Any, live: set) -> None:
        self.prog, self.live = prog, live
        self.lines: list[str] = []
        self.ns: dict[str, Any] = {"np": np, "_unb": unbroadcast_arr, "_out": _out,
                                   "_arr": as_array, "_acall": ARRAY_OPS.call,
                                   "_expand": expand_arr,
                                   "_run_node": run_node}
        self.temps = 0
        self.has_grad: set[int] = set()
        self.maybe: set[int] = set()  # gradients that may be None at run time (module hooks)
        self.in_maybe = False  # emitting inside an ``if g is not None:`` block

    def const(self, value: Any, hint: str) -> str:
        name = f"_{hint}{len(self.ns)}"
        self.ns[name] = value
        return name

    def names(self, args: list, result: str, grad: str) -> Names:
        """How a traced derivative reads values here (NOTE [Traced derivatives])."""
        return Names(args, result, grad, lambda v: self.const(v, "n"), self.call, self.temp)

    def call(self, prim: Any, params: dict, args: list) -> str:
        """A primitive without an inline form: its impl, as eager's array path runs it."""
        if prim.layout is None and prim.num_outputs == 1:
            impl = fast_impl(prim)  # NOTE [Primitive kernels]
            fn = self.const(partial(impl, **params) if params else impl, "impl")
            return f"_arr({fn}({', '.join(args)}))"
        return (f"_acall({self.const(prim, 'p')}, ({''.join(a + ', ' for a in args)}), "
                f"{self.const(params, 'k')})")

    def temp(self) -> str:
        self.temps += 1
        return f"_d{self.temps}"

    def arg(self, a: Any) -> str:
        if not isinstance(a, Node):
            return self.const(a, "k")
        return f"v{self.prog.vals[self.prog.index[id(a)]]}"

    def pos(self, a: Node) -> int:
        """The value position of `a` (a hook operator's is its base's)."""
        return self.prog.bases[self.prog.index[id(a)]]

    def accumulate(self, j: int, expr: str, shape: tuple, maybe_none: bool = False) -> None:
        """Add the contribution `expr` (of shape `shape`; None allowed if `maybe_none`) to the
        gradient of value `j`."""
        j = self.prog.bases[j]
        if j not in self.live:
            return
        unb = (lambda e: f"_unb({e}, {self.prog.shapes[j]!r})") if shape != \
            self.prog.shapes[j] else (lambda e: e)
        if maybe_none:
            self.lines += [f"    _t = {expr}", "    if _t is not None:",
                           f"        _t = {unb('_t')}",
                           f"        g{j} = _t if g{j} is None else g{j} + _t"]
            self.maybe.add(j)
        elif self.in_maybe or j in self.maybe:
            self.lines.append(f"    g{j} = {unb(expr)} if g{j} is None else g{j} + {unb(expr)}")
            self.maybe.add(j)
        elif j in self.has_grad:
            self.lines.append(f"    g{j} = g{j} + {unb(expr)}")
        else:
            self.lines.append(f"    g{j} = {unb(expr)}")
        self.has_grad.add(j)


def _out(g: Any) -> Any:
    return None if g is None else np.asarray(g)


def backward_source(prog: Any, live: set, present: tuple) -> tuple[str, dict[str, Any]]:
    """The source and namespace of ``backward(env, grads)`` for one variant (see the NOTE)."""
    em = _Emitter(prog, live)
    em.lines += ["def backward(env, grads, _fire, _leaf):"]
    head = len(em.lines)
    for k, (j, here) in enumerate(zip(prog.outputs, present)):
        if here:
            em.accumulate(j, f"grads[{k}]", prog.shapes[j])
    for kind, i in backward_order(prog, present):  # NOTE [One backward schedule]
        if kind == "leaf":
            _emit_leaf(em, i)
            continue
        node = prog.nodes[i]
        start = len(em.lines)
        em.in_maybe = i in em.maybe and not (is_setup(node) or multi_output(node))
        _emit_step(em, i, node)
        if em.in_maybe and len(em.lines) > start:
            em.lines[start:] = [f"    if g{i} is not None:"] + \
                ["    " + line for line in em.lines[start:]]
        em.in_maybe = False
    em.lines[head:head] = [f"    g{j} = None" for j in sorted(em.maybe)]
    rets = [f"_out(g{i})" if i in em.has_grad else "None" for i in prog.inputs]
    lines = _release(em.lines, head + len(em.maybe),
                     {f"g{i}" for i in prog.inputs if i in em.has_grad})
    lines.append(f"    return ({', '.join(rets)},)")
    lines[1:1] = _env_lines(lines, em.ns)
    return "\n".join(lines) + "\n", em.ns


_VALUE = re.compile(r"\bv(\d+)\b")


def _env_lines(lines: list, ns: dict) -> list:
    """The lines naming the forward values the backward reads: a chain of 300 values whose
    fused groups read 4 unpacked all 300 (about 1.5 us a call)."""
    used = sorted({int(m) for line in lines for m in _VALUE.findall(line)})
    if len(used) <= 1:
        return [f"    v{i} = env[{i}]" for i in used]
    ns["_env_pick"] = itemgetter(*used)
    return [f"    ({''.join(f'v{i}, ' for i in used)}) = _env_pick(env)"]


_TEMP = re.compile(r"\b(?:g|_d)\d+\b")


def _release(lines: list, skip: int, kept: set) -> list:
    """`lines` with each gradient (``g<j>``) and temporary (``_d<k>``) dropped after the line
    that uses it last, as eager's engine frees a node's gradient once the node has run: a
    generated backward otherwise holds every gradient of the graph until it returns (three
    times eager's peak memory on the GPT step). Names in `kept` (the input gradients the
    return line reads) stay; a name whose last use is a block header (``if g3 is not
    None:``) is left alone."""
    last: dict[str, int] = {}
    for n, line in enumerate(lines[skip:], skip):
        for name in _TEMP.findall(line):
            last[name] = n
    out = list(lines[:skip])
    drops: dict[int, list] = {}
    for name, n in last.items():
        drops.setdefault(n, []).append(name)
    for n, line in enumerate(lines[skip:], skip):
        out.append(line)
        names = [x for x in drops.get(n, ()) if x not in kept]
        if names and not line.rstrip().endswith(":"):
            indent = line[:len(line) - len(line.lstrip())]
            out.append(f"{indent}{' = '.join(sorted(names))} = None")
    return out


def _emit_leaf(em: _Emitter, k: int) -> None:
    """Hand over input `k`'s complete gradient (NOTE [Leaves in the compiled backward])."""
    j = em.prog.inputs[k]
    if j in em.has_grad:
        # handed over in a list, its name dropped first, and the last step's result tuple
        # (``g0 = _r[0]``) with it (NOTE [Fresh gradients])
        em.lines.append(f"    _b = [g{j}]; g{j} = _r = _t = None; g{j} = _leaf({k}, _b)")


def _emit_step(em: _Emitter, i: int, node: Node) -> None:
    prog, live = em.prog, em.live
    if is_setup(node):  # NOTE [Module hooks in the generated backward]
        _emit_setup(em, i, node)
        return
    if multi_output(node):  # NOTE [Multi-output primitives] in items.py
        _emit_multi(em, i, node)
        return
    hooks = prog.hooks_of.get(i)
    if hooks and i in em.has_grad and i in live:  # NOTE [Hooks in the generated backward]
        em.lines.append(f"    g{i} = _fire(({''.join(f'v{h}, ' for h in hooks)}), g{i})")
    group = prog.group_of(i)
    if group is not None:  # one kernel call, at the group's last member
        group.emit_backward(em, i)
    elif i in em.has_grad and i in live:
        _emit_node(em, i, node)


def _emit_setup(em: _Emitter, i: int, node: Node) -> None:
    items = em.prog.items_of.get(i)
    if items is None:  # one wrapped tensor: the operator's own gradient
        grads = [f"g{i}" if i in em.has_grad else "None"]
    else:
        grads = [f"g{items[k]}" if items.get(k) in em.has_grad else "None"
                 for k in range(len(node.args) - 3)]
    if all(g == "None" for g in grads) or i not in em.live:
        return
    values = "".join(f"{em.arg(a)}, " for a in node.args[3:])
    em.lines.append(f"    _r = _run_node(v{i}, ({''.join(g + ', ' for g in grads)}), "
                    f"({values}), _fire)")
    for k, a in enumerate(node.args[3:]):
        j = em.pos(a)
        em.accumulate(j, f"_r[{k}]", em.prog.shapes[j], maybe_none=True)


def _emit_multi(em: _Emitter, i: int, node: Node) -> None:
    """One call of the node's rules on its picks' gradients (NOTE [Multi-output
    primitives]); hooks registered on a pick fire on its total gradient first."""
    prog = em.prog
    items = prog.items_of.get(i, {})
    picked = [items.get(k) for k in range(len(prog.shapes[i]))]
    grads = [f"g{j}" if j is not None and j in em.has_grad and j in em.live else "None"
             for j in picked]
    if i not in em.live or all(g == "None" for g in grads):
        return
    for j, g in zip(picked, grads):
        hooks = prog.hooks_of.get(j) if g != "None" else None
        if hooks:  # NOTE [Hooks in the generated backward]
            fire = f"g{j} = _fire(({''.join(f'v{h}, ' for h in hooks)}), g{j})"
            em.lines += ([f"    if g{j} is not None:", f"        {fire}"] if j in em.maybe
                         else [f"    {fire}"])
    args = [em.arg(a) for a in node.args]
    live_args = [k for k, a in enumerate(node.args)
                 if isinstance(a, Node) and em.pos(a) in em.live]
    helper = em.const(multi_vjp(node, [prog.shapes[em.pos(a)] if isinstance(a, Node)
                                       else np.shape(a) for a in node.args],
                                [k in live_args for k in range(len(node.args))]), "vjp")
    em.lines.append(f"    _r = {helper}(({''.join(g + ', ' for g in grads)}), v{i}, "
                    f"{', '.join(args)})")
    for k in live_args:
        j = em.pos(node.args[k])
        em.accumulate(j, f"_r[{k}]", prog.shapes[j], maybe_none=True)


def _emit_node(em: _Emitter, i: int, node: Node) -> None:
    prog = em.prog
    args = [em.arg(a) for a in node.args]
    live_args = [k for k, a in enumerate(node.args)
                 if isinstance(a, Node) and em.pos(a) in em.live]
    found = None
    if all(isinstance(a, Node) and prog.dtypes[em.pos(a)] is not None for a in node.args):
        found = derivative(node.target, tuple((prog.shapes[em.pos(a)], prog.dtypes[em.pos(a)])
                                              for a in node.args))
    if found is not None:  # NOTE [Traced derivatives] in derivative.py
        lines, grads = lower(found, live_args, em.names(args, f"v{i}", f"g{i}"))
        em.lines += [f"    {line}" for line in lines]
        for k in live_args:
            if k in grads:
                em.accumulate(em.pos(node.args[k]), grads[k], found.shapes[k])
        return
    helper = em.const(generic_vjp(node, [prog.shapes[em.pos(a)] if isinstance(a, Node)
                                         else np.shape(a) for a in node.args],
                                  [k in live_args for k in range(len(node.args))]), "vjp")
    em.lines.append(f"    _r = {helper}(g{i}, v{i}, {', '.join(args)})")
    for k in live_args:
        j = em.pos(node.args[k])
        em.accumulate(j, f"_r[{k}]", prog.shapes[j])


def generic_vjp(node: Node, shapes: list, wanted: list) -> Callable[..., tuple]:
    """``f(grad, result, *inputs) -> grads`` running `node`'s VJP rules on arrays
    (`items.multi_vjp` with one output gradient; a function of several primitives,
    ``F.linear``, through the engine)."""
    call = node.target
    if type(call) is not PrimCall:
        return lambda grad, result, *values: tuple(engine_vjp(call, values, grad, wanted))
    rules = multi_vjp(node, shapes, wanted)
    return lambda grad, result, *values: rules((grad,), result, *values)
