"""Generated forward plus a compiled backward for graphs that record gradients ("inductor").

The forward is the straight-line NumPy code of `inductor.numpy_source`, extended to also return
every node value. The whole graph becomes one autograd node, ``CompiledFunctionBackward`` (the
name PyTorch's AOT autograd gives it). Its backward walks the primitives in reverse and calls
their VJP rules on arrays wrapped as tensors. The rules run in "raw" mode (NOTE [Raw backward]),
so the per-op engine scheduling and the forward's per-op node building are both skipped.

Only graphs of single-output primitives and 2-D ``F.linear`` without casts qualify, and only
while no saved-tensor hooks are active (their state is part of the entry key). Anything else
(hook operators, in-place ops, multi-output ops) runs the graph's own code, so hooks keep eager's
semantics. Double backward (``create_graph=True``) through this node raises.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from hookgrad._config import STATE
from hookgrad._tensor import Tensor
from hookgrad.autograd._nodes import _PLANS, plan_of
from hookgrad.autograd.function import Function
from hookgrad.compile.codegen.backward import backward_source, live_values
from hookgrad.compile.codegen.forward import numpy_source
from hookgrad.compile.codegen.fusion import find_groups
from hookgrad.compile.graph import GraphModule, Node
from hookgrad.compile.recorder import PrimCall
from hookgrad.nn import functional as _F

__all__ = ["joint_supported", "JointProgram"]

_make = Tensor._make
_LINEAR = _F.linear


def joint_supported(gm: GraphModule, example_inputs: list) -> bool:
    """True when `JointProgram` can run `gm` (see the module docstring)."""
    if STATE.saved_hooks_stack:
        return False
    outputs = {id(v) for n in gm.graph.nodes if n.op == "output" for v in n.args[0]}
    for node in gm.graph.nodes:
        if node.op != "call_function":
            continue
        target = node.target
        if type(target) is PrimCall:
            prim = target.prim
            if prim.num_outputs != 1 or target.cast is not None or not prim.vjp:
                return False
            if prim.view and id(node) in outputs:  # a returned view must alias its base
                return False
        elif target is _LINEAR:
            if node.kwargs or len(node.args) not in (2, 3) or not _two_d(node, example_inputs):
                return False
        else:
            return False
    return True


def _two_d(node: Node, example_inputs: list) -> bool:
    """Linear's input is 2-D (its shape is known from the node that produced it)."""
    src = node.args[0]
    shape = src.meta.get("shape") if isinstance(src, Node) else None
    return shape is not None and len(shape) == 2


def _same(got: tuple, want: list, needed: tuple) -> bool:
    """NOTE [Validated variants]: a generated backward is used only if, on its first run, it
    gives the rule walk's gradients (same None-ness, shapes and dtypes, values within float
    rounding): a template that disagrees with a rule falls back instead of changing results."""
    for g, w, need in zip(got, want, needed):
        if not need:
            continue
        if (g is None) != (w is None):
            return False
        if g is None:
            continue
        w = w._data if isinstance(w, Tensor) else w
        if g.shape != w.shape or g.dtype != w.dtype:
            return False
        tol = 1e-4 if g.dtype.itemsize <= 4 else 1e-10
        scale = float(np.max(np.abs(w), initial=0.0)) if w.size else 0.0
        if not np.allclose(g, w, rtol=tol, atol=tol * (scale or 1.0), equal_nan=True):
            return False
    return True


class CompiledFunction(Function):
    """The autograd node of a compiled graph (forward and backward are generated programs)."""

    @staticmethod
    def forward(ctx: Any, program: JointProgram, *inputs: Tensor) -> Any:
        outs, env, fused = program.forward([t._data for t in inputs])
        ctx.program = program
        ctx.env = env
        ctx.fused = fused
        ctx.set_materialize_grads(False)  # an unused output's gradient is pruned, not zeros
        return tuple(_make(o) for o in outs)

    @staticmethod
    def backward(ctx: Any, *grads: Any) -> Any:
        if STATE.grad_enabled:
            raise RuntimeError("double backward through a graph compiled by hookgrad's "
                               "\"inductor\" backend is not supported; use backend=\"eager\"")
        return (None, *ctx.program.backward(ctx.env, grads, ctx.needs_input_grad[1:],
                                            ctx.fused))


class JointProgram:
    """Forward code plus the reverse walk over the graph's primitives."""

    def __init__(self, gm: GraphModule, fwd: Any) -> None:
        self.fwd = fwd
        self.shapes: list[tuple] = []  # of every value, for the variant being generated
        self.variants: dict[tuple, Any] = {}  # NOTE [Generated backward] in codegen/backward.py
        nodes = [n for n in gm.graph.nodes if n.op != "output"]
        self.index = {id(n): i for i, n in enumerate(nodes)}
        self.inputs = [self.index[id(n)] for n in nodes if n.op == "placeholder"]
        out = next(n for n in gm.graph.nodes if n.op == "output")
        self.outputs = [self.index[id(v)] for v in out.args[0]]
        self.steps = [(i, n) for i, n in enumerate(nodes) if n.op == "call_function"]
        self.fused: Any = None  # the fused forward (`fuse`), checked on its first run
        self.checked = False
        self.signature: tuple = ()
        self.groups: dict[int, Any] = {}
        self.fusing = False

    def __call__(self, *inputs: Tensor) -> tuple:
        return CompiledFunction.apply(self, *inputs)

    # ------------------------------------------------------------ fusion
    def fuse(self, gm: GraphModule, example_inputs: list) -> None:
        """Find fused groups on a probe run of `example_inputs` and build the fused forward
        (NOTE [Fused groups] in codegen/fusion.py). Without groups nothing changes."""
        if len(example_inputs) != len(self.inputs) or not all(
                isinstance(t, Tensor) for t in example_inputs):
            return
        arrays = [t._data for t in example_inputs]
        env = self.fwd(*arrays)[1]
        groups = find_groups(gm.graph.nodes, self.steps, env, self.index)
        if not groups:
            return
        src, ns = numpy_source(gm, joint=True, groups=groups)
        exec(compile(src, f"<hookgrad fused {id(self):x}>", "exec"), ns)  # noqa: S102
        self.fused_code = gm.fused_code = src
        self.groups = {i: g for g in groups for i, _ in g.steps}
        self.fused = ns["forward"]
        self.signature = tuple((a.shape, a.dtype) for a in arrays)

    def forward(self, arrays: list) -> tuple:
        """``(outputs, env, fused)``: the fused forward when it applies (its outputs checked
        against the plain forward's on its first run, NOTE [Validated variants]), else the
        plain one."""
        if self.fused is not None and tuple((a.shape, a.dtype) for a in arrays) == self.signature:
            if self.checked:
                return (*self.fused(*arrays), True)
            outs, env = self.fused(*arrays)
            plain = self.fwd(*arrays)
            self.checked = _same(outs, plain[0], (True,) * len(outs))
            if self.checked:
                return outs, env, True
            self.fused = None
            return (*plain, False)
        return (*self.fwd(*arrays), False)

    def group_of(self, i: int) -> Any:
        """The fused group computing value `i` while a fused variant is generated."""
        return self.groups.get(i) if self.fusing else None

    # ------------------------------------------------------------ backward
    def backward(self, env: tuple, grads: tuple, needed: tuple, fused: bool) -> list:
        """The input gradients: the generated backward of this variant (validated against the
        rule walk on its first run, NOTE [Validated variants]), else the walk."""
        arrays = tuple(None if g is None else g._data for g in grads)
        key = (needed, tuple(a is not None for a in arrays),
               tuple(env[i].shape for i in self.inputs), fused)
        fn = self.variants.get(key)
        if fn is None:
            fn = self.variants[key] = self._variant(env, arrays, key)
        if fn is not False:
            return [None if g is None else _make(g) for g in fn(env, arrays)]
        return self.walk(self._full(env, fused), grads, needed)

    def _full(self, env: tuple, fused: bool) -> tuple:
        """Every value (a fused forward leaves group internals out: recompute them)."""
        return self.fwd(*[env[i] for i in self.inputs])[1] if fused else env

    def _variant(self, env: tuple, arrays: tuple, key: tuple) -> Any:
        full = self._full(env, key[3])
        self.shapes = [np.shape(v) for v in full]
        self.fusing = key[3]
        try:
            src, ns = backward_source(self, live_values(self, key[0]), key[1])
        finally:
            self.fusing = False
        exec(compile(src, f"<hookgrad backward {id(self):x}>", "exec"), ns)  # noqa: S102
        fn = ns["backward"]
        self.backward_code = src
        got = fn(env, arrays)
        want = self.walk(full, tuple(None if a is None else _make(a) for a in arrays), key[0])
        return fn if _same(got, want, key[0]) else False

    def walk(self, env: tuple, grads: tuple, needed: tuple) -> list:
        """The backward by calling each primitive's VJP rules in reverse (the reference)."""
        live = self._live(needed)
        acc: dict[int, Any] = {}
        for i, g in zip(self.outputs, grads):
            if g is not None:
                acc[i] = acc[i] + g._data if i in acc else g._data
        for i, node in reversed(self.steps):
            g = acc.pop(i, None)
            if g is None:
                continue
            args = [self.index[id(a)] if isinstance(a, Node) else None for a in node.args]
            for j, gj in self._vjp(node, env, i, args, g, live):
                if j in live and gj is not None:
                    acc[j] = acc[j] + gj if j in acc else gj
        return [_make(np.asarray(acc[i])) if need and i in acc else None
                for i, need in zip(self.inputs, needed)]

    def _live(self, needed: tuple) -> set:
        """Values whose gradient is needed: those depending on an input that needs one."""
        live = {i for i, need in zip(self.inputs, needed) if need}
        for i, node in self.steps:
            if any(isinstance(a, Node) and self.index[id(a)] in live for a in node.args):
                live.add(i)
        return live

    def _vjp(self, node: Node, env: tuple, i: int, args: list, g: Any, live: set) -> list:
        if node.target is _LINEAR:
            x, w = env[args[0]], env[args[1]]
            out = []
            if args[0] in live:
                out.append((args[0], np.dot(g, w)))
            if args[1] in live:
                out.append((args[1], np.dot(g.T, x)))
            if len(args) == 3 and args[2] in live:
                out.append((args[2], g.sum(0)))
            return out
        call: PrimCall = node.target
        prim = call.prim
        plan = _PLANS.get(prim) or plan_of(prim)
        values = [_make(env[a]) for a in args]
        saved: dict[str, Any] = {}
        for name, src in plan.saves_for(prim, (1 << len(prim.diff_inputs)) - 1):
            saved[name] = _make(env[i]) if src == -1 else values[src]
        meta = tuple((env[a].shape, env[a].dtype) for a in args)
        grad = _make(g)
        out = []
        for k, caller in enumerate(plan.callers):
            if args[prim.diff_inputs[k]] not in live:
                continue
            res = caller(grad, (grad,), saved, call.params, meta)
            out.append((args[prim.diff_inputs[k]], None if res is None else res._data))
        return out
