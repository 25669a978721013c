"""The joint program of the ``"inductor"``/``"aot_eager"`` backends: one autograd node for a graph.

The whole graph becomes one autograd node, ``CompiledFunctionBackward`` (the name PyTorch's AOT
autograd gives it). Its forward is generated straight-line NumPy code (`codegen.forward`; with
Numba, fused groups run as kernels, `codegen.fusion`) returning every value the backward needs.
Its backward is generated code too (NOTE [Generated backward] in codegen/backward.py), one
function per variant, checked against the rule walk (`codegen.walk`) on its first run.
Intermediate hooks (``register_hook`` operators) fire inside it (NOTE [Hooks in the generated
backward] in codegen/hooks.py).

Graphs of primitives (multi-output ones picked by ``getitem``: NOTE [Multi-output
primitives] in codegen/items.py), ``F.linear`` and hook operators on intermediates qualify, while no saved-tensor hooks are active (their state is part of the entry key);
anything else runs the graph's own code. Double backward re-runs the graph's own code
(NOTE [Differentiable backward]).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from hookgrad._config import STATE
from hookgrad._ops.complex_ops import DIRECT_COMPLEX_RULES
from hookgrad._tensor import Tensor
from hookgrad.autograd._api import grad as autograd_grad
from hookgrad.autograd.function import Function
from hookgrad.autograd.grad_mode import enable_grad
from hookgrad.compile.codegen.backward import backward_source, live_values
from hookgrad.compile.codegen.forward import numpy_source
from hookgrad.compile.codegen.fusion import find_groups
from hookgrad.compile.codegen.hooks import bases_of, fire, hook_supported, is_hook_op, skip
from hookgrad.compile.codegen.items import carries_grad, multi_output
from hookgrad.compile.codegen.leaves import keep, leaf_runner
from hookgrad.compile.codegen.modhooks import is_setup, setup_supported
from hookgrad.compile.codegen.walk import walk
from hookgrad.compile.core.graph import GraphModule, Node
from hookgrad.compile.trace.recorder import PrimCall, getitem
from hookgrad.nn import functional as _F

__all__ = ["joint_supported", "JointProgram", "requires_grad_names"]

_make = Tensor._make
_LINEAR = _F.linear


def joint_supported(gm: GraphModule, example_inputs: list) -> bool:
    """True when `JointProgram` can run `gm` (see the module docstring)."""
    if STATE.saved_hooks_stack or _has_complex(gm, example_inputs):
        return False
    outputs = {id(v) for n in gm.graph.nodes if n.op == "output" for v in n.args[0]}
    for node in gm.graph.nodes:
        if node.op != "call_function":
            continue
        target = node.target
        if type(target) is PrimCall:
            prim = target.prim
            if prim.name in _MAKES_COMPLEX:
                return False
            if target.cast is not None or (prim.num_outputs != 1 and not _items_only(node)):
                return False
            if prim.view and id(node) in outputs:  # a returned view must alias its base
                return False
            if not prim.vjp and id(node) in outputs:  # (its result needs no grad: eager's
                return False                         # flag, not the graph node's)
        elif target is _LINEAR:
            if node.kwargs or len(node.args) not in (2, 3) or not _two_d(node, example_inputs):
                return False
        elif target is getitem:
            if not (isinstance(node.args[0], Node) and (
                    is_setup(node.args[0]) or _item_supported(node, outputs))):
                return False
        elif is_setup(node):
            if not setup_supported(node):
                return False
        elif not (is_hook_op(node) and hook_supported(node)):
            return False
        elif id(node) in outputs:
            # a returned tensor with a hook registered inside: a hook the caller adds to it
            # must run after that one, as in eager; one autograd node for the graph would run
            # the caller's first (on the output), so the graph's own code runs instead
            return False
    return True


# Complex values: the generated backward runs the rules without the engine's conjugation step
# (NOTE [Complex gradients] in _ops/complex_ops.py), so such graphs run their own code.
_MAKES_COMPLEX = DIRECT_COMPLEX_RULES | {"_fft_c2c", "_fft_r2c", "_fft_c2r"}


def _has_complex(gm: GraphModule, example_inputs: list) -> bool:
    def complex_tensor(value: Any) -> bool:
        return isinstance(value, Tensor) and value._data.dtype.kind == "c"

    if any(complex_tensor(t) for t in example_inputs):
        return True
    return any(n.op == "get_attr" and complex_tensor(getattr(gm, str(n.target), None))
               for n in gm.graph.nodes)


def _items_only(node: Node) -> bool:
    """Every use of the tuple result is a ``getitem`` with a constant index."""
    return all(u.op == "call_function" and u.target is getitem and type(u.args[1]) is int
               and u.args[0] is node for u in node.users)


def _item_supported(node: Node, outputs: set) -> bool:
    """An item of a multi-output primitive; a returned one is a differentiable output that is
    not a view (a returned view must alias its base; a non-differentiable output's
    ``requires_grad`` is eager's, not its graph's)."""
    parent = node.args[0]
    if not (isinstance(parent, Node) and multi_output(parent)):
        return False
    if id(node) not in outputs:
        return True
    prim = parent.target.prim
    return not prim.view and node.args[1] not in prim.nondifferentiable_outputs


def requires_grad_names(gm: GraphModule, example_inputs: list) -> set:
    """Names of the graph values that require grad in calls of this entry (its inputs'
    ``requires_grad`` are guarded)."""
    nodes = gm.graph.nodes
    names = {n.name for n, t in zip([n for n in nodes if n.op == "placeholder"], example_inputs)
             if isinstance(t, Tensor) and t.requires_grad}
    for node in nodes:
        if node.op == "call_function" and carries_grad(node) and any(
                isinstance(a, Node) and a.name in names for a in node.args):
            names.add(node.name)
    return names


def _nodes_in(value: Any) -> list:
    if isinstance(value, Node):
        return [value]
    if isinstance(value, (tuple, list)):
        return [n for v in value for n in _nodes_in(v)]
    if isinstance(value, dict):
        return [n for v in value.values() for n in _nodes_in(v)]
    return []


def _two_d(node: Node, example_inputs: list) -> bool:
    """Linear's input has at least 2 dims (its shape is known from the node that produced
    it); more are flattened to rows, as eager's linear does (`codegen.forward.linear_np`)."""
    src = node.args[0]
    shape = src.meta.get("shape") if isinstance(src, Node) else None
    return shape is not None and len(shape) >= 2


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
        ctx.inputs = inputs
        ctx.env = env
        ctx.fused = fused
        ctx.set_materialize_grads(False)  # an unused output's gradient is pruned, not zeros
        res = tuple(_make(o) for o in outs)
        constant = program.constant_outputs(inputs)
        if constant:  # outputs of no grad-requiring input: requires_grad=False, as eager's
            ctx.mark_non_differentiable(*[res[i] for i in constant])
        return res

    @staticmethod
    def backward(ctx: Any, *grads: Any) -> Any:
        needed = ctx.needs_input_grad[1:]
        if STATE.grad_enabled:  # create_graph: NOTE [Differentiable backward]
            return (None, *_differentiable_backward(ctx.program, ctx.inputs, grads, needed))
        return (None, *ctx.program.backward(ctx.env, grads, needed, ctx.fused, leaf_runner(ctx)))


def _differentiable_backward(program: JointProgram, inputs: tuple, grads: tuple,
                             needed: tuple) -> list:
    """NOTE [Differentiable backward]: with ``create_graph=True`` the gradients must
    themselves be differentiable, which arrays are not: the graph's own code (hookgrad ops) is
    re-run on the call's inputs with grad mode on and differentiated by the engine with
    ``create_graph=True``. Values equal eager's; intermediate hooks fire once, on that graph."""
    with enable_grad():
        outs = program.graph_forward(*inputs)
    pairs = [(o, g) for o, g in zip(outs, grads)
             if g is not None and isinstance(o, Tensor) and o.requires_grad]
    wanted = [t for t, need in zip(inputs, needed) if need]
    if not pairs or not wanted:
        return [None] * len(inputs)
    res = iter(autograd_grad([o for o, _ in pairs], wanted, [g for _, g in pairs],
                             create_graph=True, allow_unused=True))
    return [next(res) if need else None for need in needed]


class JointProgram:
    """Forward code plus the reverse walk over the graph's primitives."""

    def __init__(self, gm: GraphModule, fwd: Any) -> None:
        self.fwd = fwd
        self.graph_forward = gm.forward  # NOTE [Differentiable backward]
        self._graph = gm.graph
        self._constant_outputs: dict[tuple, tuple] = {}
        self.shapes: list[tuple] = []  # of every value, for the variant being generated
        self.dtypes: list[Any] = []  # of every value (None: not an array), likewise
        self.variants: dict[tuple, Any] = {}  # NOTE [Generated backward] in codegen/backward.py
        nodes = [n for n in gm.graph.nodes if n.op != "output"]
        self.nodes = nodes
        self.index = {id(n): i for i, n in enumerate(nodes)}
        self.inputs = [self.index[id(n)] for n in nodes if n.op == "placeholder"]
        out = next(n for n in gm.graph.nodes if n.op == "output")
        self.outputs = [self.index[id(v)] for v in out.args[0]]
        self.steps = [(i, n) for i, n in enumerate(nodes) if n.op == "call_function"]
        self.bases = bases_of(nodes, self.index)  # hook operators alias their base value
        self.vals = list(self.bases)  # where each value's array is (a setup's: its tensor's)
        for j, n in enumerate(nodes):
            if is_setup(n) and n.args[2]:
                self.vals[j] = self.vals[self.index[id(n.args[3])]]
        self.hooks_of: dict[int, list[int]] = {}
        self.items_of: dict[int, dict[int, int]] = {}  # setup operator -> {k: its getitem}
        for i, n in self.steps:
            if is_hook_op(n):
                self.hooks_of.setdefault(self.bases[i], []).append(i)
            elif n.target is getitem:
                self.items_of.setdefault(self.index[id(n.args[0])], {})[n.args[1]] = i
        self.fused: Any = None  # the fused forward (`fuse`), checked on its first run
        self.checked = False
        self.signature: tuple = ()
        self.groups: dict[int, Any] = {}
        self.fusing = False
        self.fusion_error: Exception | None = None  # why fusion was given up, if it was
        self.variant_errors: list[Exception] = []  # generated variants that failed to run

    def __call__(self, *inputs: Tensor) -> tuple:
        return CompiledFunction.apply(self, *inputs)

    def constant_outputs(self, inputs: tuple) -> tuple:
        """Indices of the outputs that depend on no input requiring grad in this call."""
        key = tuple(isinstance(t, Tensor) and t._requires_grad for t in inputs)
        hit = self._constant_outputs.get(key)
        if hit is None:
            nodes = self._graph.nodes
            places = [n for n in nodes if n.op == "placeholder"]
            live = {id(n) for n, rg in zip(places, key) if rg}
            for node in nodes:
                if node.op == "call_function" and any(
                        id(a) in live for a in _nodes_in((node.args, node.kwargs))):
                    live.add(id(node))
            out = next(n for n in nodes if n.op == "output").args[0]
            hit = self._constant_outputs[key] = tuple(
                i for i, v in enumerate(out) if not (isinstance(v, Node) and id(v) in live))
        return hit

    # ------------------------------------------------------------ fusion
    def fuse(self, gm: GraphModule, example_inputs: list) -> None:
        """Find fused groups on a probe run of `example_inputs` and build the fused forward
        (NOTE [Fused groups] in codegen/fusion.py). Without groups nothing changes."""
        if len(example_inputs) != len(self.inputs) or self.items_of or not all(
                isinstance(t, Tensor) for t in example_inputs) or any(
                is_setup(n) for _, n in self.steps):  # module hooks: per-node gradients
            return
        arrays = [t._data for t in example_inputs]
        env = self.fwd(*arrays, _hooks=False)[1]
        groups = find_groups(gm.graph.nodes, self.steps, env, self.index, self.bases,
                             set(self.hooks_of))
        if not groups:
            return
        try:  # a kernel that cannot be built (cache dir, Numba) leaves the program unfused
            src, ns = numpy_source(gm, joint=True, groups=groups)
        except Exception as e:  # noqa: BLE001 - recorded, and the plain code runs
            self.fusion_error = e
            return
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
            try:  # the first run also compiles the kernels
                outs, env = self.fused(*arrays)
            except Exception as e:  # noqa: BLE001 - recorded, and the plain code runs
                self.fusion_error, self.fused = e, None
                return (*self.fwd(*arrays), False)
            self.checked = _same(outs, self.fwd(*arrays, _hooks=False)[0], (True,) * len(outs))
            if self.checked:
                return outs, env, True
            self.fused = None
        return (*self.fwd(*arrays), False)

    def group_of(self, i: int) -> Any:
        """The fused group computing value `i` while a fused variant is generated."""
        return self.groups.get(i) if self.fusing else None

    # ------------------------------------------------------------ backward
    def backward(self, env: tuple, grads: tuple, needed: tuple, fused: bool, leaf: Any) -> list:
        """The input gradients: the generated backward of this variant (validated against the
        rule walk on its first run, NOTE [Validated variants]), else the walk."""
        arrays = tuple(None if g is None else g._data for g in grads)
        key = (needed, tuple(a is not None for a in arrays),
               tuple(env[i].shape for i in self.inputs), fused)
        fn = self.variants.get(key)
        if fn is None:
            fn = self.variants[key] = self._variant(env, arrays, key)
        if fn is not False:
            return [None if g is None else _make(g) for g in fn(env, arrays, fire, leaf)]
        return self.walk(self._full(env, fused), grads, needed, fire, leaf)

    def _full(self, env: tuple, fused: bool) -> tuple:
        """Every value (a fused forward leaves group internals out: recompute them, keeping
        this call's hook registries)."""
        if not fused:
            return env
        full = list(self.fwd(*[env[i] for i in self.inputs], _hooks=False)[1])
        for i, node in self.steps:
            if is_hook_op(node) or is_setup(node):
                full[i] = env[i]
        return tuple(full)

    def _shape(self, full: tuple, j: int) -> tuple:
        node = self.nodes[j]
        if multi_output(node):  # the shape of each output
            return tuple(np.shape(r) for r in full[j])
        if is_setup(node):  # its value is its tensor (one) or a tuple of them
            return self._shape(full, self.index[id(node.args[3])]) if node.args[2] else ()
        return np.shape(full[self.bases[j]])

    def _variant(self, env: tuple, arrays: tuple, key: tuple) -> Any:
        full = self._full(env, key[3])
        try:
            self.shapes = [self._shape(full, j) for j in range(len(full))]
            self.dtypes = [getattr(full[v], "dtype", None) for v in self.vals]
        except ValueError as e:  # a value whose shape the generator cannot read: the walk runs
            self.variant_errors.append(e)
            return False
        self.fusing = key[3]
        try:
            src, ns = backward_source(self, live_values(self, key[0]), key[1])
        finally:
            self.fusing = False
        exec(compile(src, f"<hookgrad backward {id(self):x}>", "exec"), ns)  # noqa: S102
        fn = ns["backward"]
        self.backward_code = src
        try:  # no user code runs here (hooks are skipped): an error is the generator's
            got = fn(env, arrays, skip, keep)  # hooks fire once: in the real run, not here
        except Exception as e:  # noqa: BLE001 - recorded, and the rule walk runs
            self.variant_errors.append(e)
            return False
        want = self.walk(full, tuple(None if a is None else _make(a) for a in arrays), key[0],
                         skip, keep)
        return fn if _same(got, want, key[0]) else False

    def walk(self, env: tuple, grads: tuple, needed: tuple, hooks: Any, leaf: Any) -> list:
        """The backward by the rule walk (`codegen.walk`); `env` holds every value."""
        acc = walk(self, env, tuple(None if g is None else g._data for g in grads),
                   live_values(self, needed), hooks, leaf)
        return [_make(np.asarray(acc[i])) if need and i in acc else None
                for i, need in zip(self.inputs, needed)]
