"""Fusion of elementwise chains into Numba kernels (NOTE [Fused groups]).

NOTE [Fused groups]
A *group* is a run of consecutive primitive nodes of the `pointwise` table that all produce
the same shape and floating dtype and read only values of that shape and dtype, or constants
of one element baked into the graph (written into the kernel as literals of the group's
dtype). Its *outputs* are the members read after the group (by other nodes or as graph
outputs). The forward runs the group as one loop over the elements (`forward_kernel`),
writing only the outputs; values inside the group are never materialised. The backward
recomputes the group's forward per element from the group's inputs, then the members'
derivatives in reverse on scalars (`backward_kernel`; each the scalar lowering of the
primitives its registered rules call, NOTE [Traced derivatives] in derivative.py, so a
primitive joins a group only if those have scalar forms too): one pass, no saved intermediates,
which is what makes a 200-op chain cost about one memory pass each way. Groups are found on
the values of a probe run (shapes and dtypes are static: the program is specialised on its
input shapes, and `JointProgram` checks them on every call).
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np

from hookgrad.compile.codegen.fastmath import TANH32_SOURCE
from hookgrad.compile.codegen.kernels import load_kernel
from hookgrad.compile.codegen.derivative import Names, NotLowerable, derivative, lower
from hookgrad.compile.codegen.pointwise import forward_expr, lowerable
from hookgrad.compile.core.graph import Node
from hookgrad.compile.trace.recorder import PrimCall

__all__ = ["Group", "find_groups"]

MIN_GROUP = 2
_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))  # what kernels compute in
# A longer run is split into groups of at most MAX_GROUP members: LLVM's compile time grows
# faster than linearly with a kernel's length, and the links of a long chain then share
# kernels (`canonical`), at one kernel call per group and direction (about 1.5 us each).
MAX_GROUP = 64
# NOTE [Interleaved chains]
# A long chain is one dependent sequence per element: the vectorised loop is bound by the
# latency of its ops (a 100-tanh chain: thousands of cycles per vector, more than the CPU's
# reorder window). Each iteration therefore runs two independent halves of the array with
# their statements interleaved line by line, which the CPU overlaps (measured: the 100-tanh
# kernel 57 -> 28 us on 256 floats). Four halves stopped LLVM vectorising the loop.
_SCALAR = re.compile(r"\b([vgt]\d+)\b")
_CONSTS = {"c0": "_c0", "c1": "_c1", "c2": "_c2"}


def _fusable(node: Node, i: int, env: tuple, pos: Any) -> bool:
    """An elementwise primitive with a scalar form whose traced derivative (NOTE [Traced
    derivatives] in derivative.py) has one too, for the arguments of the result's shape."""
    call = node.target
    if not (type(call) is PrimCall and call.cast is None
            and lowerable(call.prim, call.params, scalar=True)
            and all(isinstance(a, Node) for a in node.args)
            and getattr(env[i], "dtype", None) in _FLOATS):
        return False
    values = [env[pos(a)] for a in node.args]
    found = derivative(call, tuple((v.shape, v.dtype) for v in values))
    if found is None:
        return False
    wanted = [k for k, v in enumerate(values) if v.shape == env[i].shape]
    def number(v: Any) -> str:
        if isinstance(v, np.ndarray) and v.dtype != env[i].dtype:
            raise NotLowerable("a number of another dtype")
        return "n"
    names = Names([f"a{k}" for k in range(len(values))], "r", "g", number, None, lambda: "t",
                  _CONSTS)
    try:
        lower(found, wanted, names)
    except NotLowerable:
        return False
    return True


def find_groups(nodes: list, steps: list, env: tuple, index: dict, bases: list,
                hooked: set) -> list:
    """The fused groups of a joint program (see the NOTE): `nodes` are the graph's nodes,
    `steps` its ``(position, node)`` calls, `env` a probe's values by position, `bases` the
    value each position aliases and `hooked` the values with hooks (NOTE [Hooks in the
    generated backward]): a hooked value may only be the last member of a group."""
    n_values = len(index)
    by_pos = {index[id(n)]: n for n in nodes if id(n) in index}
    pos = _Positions(index, bases, by_pos)
    readers: dict[int, list[int]] = {}  # value -> positions reading it (outputs: n_values)
    for node in nodes:
        args = node.args[0] if node.op == "output" else node.args
        for a in args if node.op in ("call_function", "output") else ():
            if isinstance(a, Node):
                readers.setdefault(index[id(a)], []).append(index.get(id(node), n_values))
    groups: list[Group] = []
    run: list[tuple[int, Node]] = []

    def close() -> None:
        if len(run) >= MIN_GROUP:
            group = Group(list(run), env, pos, readers, n_values)
            if group.inputs and group.outputs:
                groups.append(group)
        run.clear()

    for i, node in steps:
        if not (_fusable(node, i, env, pos) and _joins(run, i, node, env, pos)):
            close()
            if not (_fusable(node, i, env, pos) and _joins(run, i, node, env, pos)):
                continue
        run.append((i, node))
        if i in hooked or len(run) == MAX_GROUP:  # hooked: its hooks fire on its total
            close()                                 # gradient, so no member may read it
    close()
    return groups


class _Positions:
    """Value positions of argument nodes, through hook aliases to their base."""

    def __init__(self, index: dict, bases: list, by_pos: dict) -> None:
        self.index, self.bases, self.by_pos = index, bases, by_pos

    def __call__(self, a: Node) -> int:
        return self.bases[self.index[id(a)]]

    def node(self, a: Node) -> Node:
        return self.by_pos[self(a)]


def _joins(run: list, i: int, node: Node, env: tuple, pos: _Positions) -> bool:
    out = env[i]
    if out.dtype not in _FLOATS or out.ndim == 0:
        return False
    if run and (env[run[0][0]].shape != out.shape or env[run[0][0]].dtype != out.dtype):
        return False
    for a in node.args:
        v = env[pos(a)]
        if v.dtype != out.dtype:
            return False
        if v.shape != out.shape and not (pos.node(a).op == "get_attr" and v.size == 1):
            return False
    return True


class Group:
    """One fused group: its members, inputs, outputs and kernels (see the NOTE)."""

    def __init__(self, run: list, env: tuple, pos: _Positions, readers: dict,
                 n_values: int) -> None:
        self.steps = run
        self.nodes = [n for _, n in run]
        self.pos = pos
        positions = {i for i, _ in run}
        last = run[-1][0]
        self.outputs = [n for i, n in run
                        if any(r > last or r == n_values for r in readers.get(i, ()))]
        self.dtype = env[run[0][0]].dtype
        self.shape = env[run[0][0]].shape
        self.consts: dict[int, float] = {}
        self.inputs: list[Node] = []
        for _, node in run:
            for a in node.args:
                j, base = pos(a), pos.node(a)
                if j in positions or j in self.consts or base in self.inputs:
                    continue
                if base.op == "get_attr" and env[j].size == 1:
                    self.consts[j] = float(env[j].reshape(-1)[0])
                else:
                    self.inputs.append(base)
        self.fwd_kernel: Any = None
        self.numbers: dict[float, str] = {}  # of the source being written (`_number`)
        # (shape, dtype) of the values members read: their derivatives are traced on these
        self.metas = {pos(a): (env[pos(a)].shape, env[pos(a)].dtype)
                      for _, node in run for a in node.args}

    # ------------------------------------------------------------ source pieces
    def _prelude(self) -> list[str]:
        dt = f"np.{self.dtype.name}"
        lines = ["import numba", "import numpy as np", "", f"_c0 = {dt}(0)", f"_c1 = {dt}(1)",
                 f"_c2 = {dt}(2)"]
        if self.dtype == np.float32:  # NOTE [Kernel tanh]
            lines += TANH32_SOURCE.splitlines()
        lines += [f"_k{j} = {dt}({v!r})" for j, v in self.consts.items()]
        lines += [f"{name} = {dt}({v!r})" for v, name in self.numbers.items()]
        return lines

    def _number(self, value: Any) -> str:
        """A number of the source (a rule's wrapped Python number or a param) as a constant of
        the kernel's dtype, as eager computes with it."""
        if isinstance(value, np.ndarray) and value.dtype != self.dtype:
            raise NotLowerable("a number of another dtype")
        v = float(value)
        name = self.numbers.get(v)
        if name is None:
            name = self.numbers[v] = f"_n{len(self.numbers)}"
        return name

    def _name(self, a: Node) -> str:
        j = self.pos(a)
        return f"_k{j}" if j in self.consts else f"v{j}"

    def _forward_body(self) -> list[str]:
        self.numbers: dict[float, str] = {}
        lines = [f"        v{self.pos(a)} = i{k}[e]" for k, a in enumerate(self.inputs)]
        for i, node in self.steps:
            call: PrimCall = node.target
            expr = forward_expr(call.prim.name, [self._name(a) for a in node.args], call.params,
                                _CONSTS, self._number)
            if call.prim.name == "tanh" and self.dtype == np.float32:
                expr = expr.replace("np.tanh(", "_tanh32(")
            lines.append(f"        v{i} = {expr}")
        return lines

    # ------------------------------------------------------------ forward
    def forward_line(self, ns: dict[str, Any]) -> str:
        """The generated forward's line running this group (the kernel is built here)."""
        ins = [f"i{k}" for k in range(len(self.inputs))]
        outs = [f"o{k}" for k in range(len(self.outputs))]
        body = self._forward_body()
        body += [f"        o{k}[e] = v{self.pos(n)}" for k, n in enumerate(self.outputs)]
        src = self._prelude() + ["", f"def kernel({', '.join(ins + outs)}):"] + \
            self._loop(body, outs[0])
        kernel = load_kernel(canonical("\n".join(src) + "\n"), "kernel")
        fn = f"_group_fwd_{len(ns)}"
        ns[fn] = _runner(kernel, len(self.inputs), len(self.outputs), self.shape, self.dtype)
        targets = "".join(f"{n.name}, " for n in self.outputs)
        return f"    ({targets}) = {fn}({', '.join(a.name for a in self.inputs)})"

    # ------------------------------------------------------------ backward
    def emit_backward(self, em: Any, i: int) -> None:
        """Emit the group's backward into `em` (once, at its last member; see the NOTE)."""
        if i != self.steps[-1][0]:
            return
        grads = [n for n in self.outputs if self.pos(n) in em.has_grad]
        wanted = [a for a in self.inputs if self.pos(a) in em.live]
        if not grads or not wanted:
            return
        src, flows = self._backward_source(grads, wanted, em.live)
        kernel = load_kernel(canonical(src), "kernel")
        fn = em.const(_runner(kernel, len(self.inputs) + len(grads), len(flows), self.shape,
                              self.dtype), "group_bwd")
        args = [f"v{self.pos(a)}" for a in self.inputs]
        args += [f"g{self.pos(n)}" for n in grads]
        em.lines.append(f"    _r = {fn}({', '.join(args)})")
        for k, a in enumerate(flows):
            j = self.pos(a)
            em.accumulate(j, f"_r[{k}]", em.prog.shapes[j])

    def _backward_source(self, grads: list, wanted: list, live: set) -> tuple[str, list]:
        body = self._forward_body()
        has = {self.pos(n) for n in grads}
        body += [f"        g{self.pos(n)} = go{k}[e]" for k, n in enumerate(grads)]
        temps = iter(range(1 << 30))
        for i, node in reversed(self.steps):
            if i not in has:
                continue
            call: PrimCall = node.target
            values = [self.pos(a) for a in node.args]
            found = derivative(call, tuple((self.metas[j][0], self.metas[j][1]) for j in values))
            targets = [k for k, j in enumerate(values) if j in live and j not in self.consts]
            names = Names([self._name(a) for a in node.args], f"v{i}", f"g{i}", self._number,
                          None, lambda: f"t{next(temps)}", _CONSTS)
            lines, exprs = lower(found, targets, names)  # `_fusable` checked both
            body += [f"        {line}" for line in lines]
            for k in targets:
                if k not in exprs:
                    continue
                j = values[k]
                body.append(f"        g{j} = g{j} + {exprs[k]}" if j in has
                            else f"        g{j} = {exprs[k]}")
                has.add(j)
        flows = [a for a in wanted if self.pos(a) in has]
        ins = [f"i{k}" for k in range(len(self.inputs))] + [f"go{k}" for k in range(len(grads))]
        outs = [f"o{k}" for k in range(len(flows))]
        body += [f"        o{k}[e] = g{self.pos(a)}" for k, a in enumerate(flows)]
        src = self._prelude() + ["", f"def kernel({', '.join(ins + outs)}):"] + \
            self._loop(body, "i0")
        return "\n".join(src) + "\n", flows

    def _loop(self, body: list, array: str) -> list[str]:
        """The element loop over `body`, two interleaved halves when the size is even (NOTE
        [Interleaved chains])."""
        n = int(np.prod(self.shape))
        if n % 2 or n < 32:
            return [f"    for e in range({array}.shape[0]):", *body]
        lines = [f"    m = {array}.shape[0] // 2", "    for e in range(m):"]
        for line in body:
            lines += [_SCALAR.sub(lambda t: f"{t.group(1)}_{k}", line).replace(
                "[e]", "[e]" if k == 0 else "[e + m]") for k in range(2)]
        return lines


_TOKEN = re.compile(r"\b(v|g|t|_k)(\d+)(_\d+)?\b")


def canonical(src: str) -> str:
    """`src` with value, gradient and constant names renumbered by first appearance: groups
    of the same structure (the links of a chain) then share one kernel source, so one
    compilation and one cache file."""
    seen: dict[str, str] = {}
    counts: dict[str, int] = {}

    def rename(m: re.Match) -> str:
        key = m.group(1) + m.group(2)
        if key not in seen:
            counts[m.group(1)] = counts.get(m.group(1), -1) + 1
            seen[key] = f"{m.group(1)}{counts[m.group(1)]}"
        return seen[key] + (m.group(3) or "")
    return _TOKEN.sub(rename, src)


def _runner(kernel: Any, n_in: int, n_out: int, shape: tuple, dtype: Any) -> Any:
    """``run(*arrays) -> outputs``: flat C-contiguous inputs (``reshape(-1)`` alone keeps a
    broadcast gradient's zero strides, and a strided kernel does not vectorise), fresh arrays
    of `shape` out. Generated for its arity: it runs once per group per call, where a generic
    loop cost more than small kernels."""
    ins = [f"a{k}" for k in range(n_in)]
    outs = [f"o{k}" for k in range(n_out)]
    lines = [f"def run({', '.join(ins)}):"]
    lines += [f"    {o} = _empty(_shape, _dtype)" for o in outs]
    flat = [f"_c({a}).reshape(-1)" for a in ins] + [f"{o}.reshape(-1)" for o in outs]
    lines += [f"    _kernel({', '.join(flat)})", f"    return ({''.join(o + ', ' for o in outs)})"]
    ns = {"_empty": np.empty, "_shape": shape, "_dtype": dtype, "_kernel": kernel,
          "_c": np.ascontiguousarray}
    exec("\n".join(lines) + "\n", ns)  # noqa: S102
    return ns["run"]
