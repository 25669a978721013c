"""The optimised backend (``"inductor"``): straight-line NumPy code for a captured graph.

When a graph needs no autograd (grad mode off, or no input requires grad: both are guarded, so
this is known when the graph is compiled) and holds only primitives (and ``F.linear``), it is
turned into one generated Python function that calls each primitive's array implementation on
NumPy arrays directly: no `Tensor` objects between ops, no `bind`, no recorder loop. Anything
else (graphs that record gradients, hook operators, in-place ops) runs the graph's own code
(the ``"eager"`` path), so hooks and gradients keep eager's semantics.

Future work (not done): a partitioned joint forward/backward so training steps run generated
code too, fusion of elementwise chains, and the Numba extra of issue 11.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from hookgrad._config import STATE
from hookgrad._tensor import Tensor
from hookgrad.compile.graph import GraphModule, Node
from hookgrad.compile.joint import JointProgram, joint_supported
from hookgrad.compile.recorder import PrimCall, getitem
from hookgrad.nn import functional as _F

__all__ = ["inductor", "numpy_source"]

_ndarray = np.ndarray
_LINEAR = _F.linear


def _arr(value: Any) -> Any:
    return value if type(value) is _ndarray else np.asarray(value)


def _linear_np(x: Any, w: Any, b: Any = None) -> Any:
    # np.dot, not `@`: NumPy's matmul skips BLAS for a transposed operand (4x slower here)
    out = np.dot(x, w.T) if x.ndim == 2 else x @ w.T
    return out if b is None else out + b


def _optimisable(gm: GraphModule, example_inputs: list) -> bool:
    if STATE.grad_enabled and any(isinstance(t, Tensor) and t.requires_grad
                                  for t in example_inputs):
        return False
    for node in gm.graph.nodes:
        if node.op == "call_function" and not (
                type(node.target) is PrimCall or node.target is getitem
                or (node.target is _LINEAR and not node.kwargs)):
            return False
    return True


def numpy_source(gm: GraphModule, joint: bool = False) -> tuple[str, dict[str, Any]]:
    """The generated array-level source of `gm` and its namespace.

    `joint`: take and return arrays, plus a tuple of every node value (for the backward).
    """
    ns: dict[str, Any] = {"_arr": _arr, "_make": Tensor._make, "_linear": _linear_np}
    params = [n.name for n in gm.graph.nodes if n.op == "placeholder"]
    lines = [f"def forward({', '.join(params)}):"]
    if not joint:
        lines += [f"    {p} = {p}._data" for p in params]
    for node in gm.graph.nodes:
        if node.op == "get_attr":
            ns[f"_c_{node.name}"] = getattr(gm, node.target)._data
            lines.append(f"    {node.name} = _c_{node.name}")
        elif node.op == "call_function":
            lines.append(f"    {node.name} = {_call(node, ns)}")
        elif node.op == "output" and joint:
            outs = "".join(f"_arr({_name(v)}), " for v in node.args[0])
            env = "".join(f"{n.name}, " for n in gm.graph.nodes if n.op != "output")
            lines.append(f"    return ({outs}), ({env})")
        elif node.op == "output":
            outs = "".join(f"_make(_arr({_name(v)})), " for v in node.args[0])
            lines.append(f"    return ({outs})")
    return "\n".join(lines) + "\n", ns


def _name(value: Any) -> str:
    return value.name if isinstance(value, Node) else repr(value)


def _call(node: Node, ns: dict[str, Any]) -> str:
    args = [_name(a) for a in node.args]
    if node.target is getitem:
        return f"{args[0]}[{args[1]}]"
    if node.target is _LINEAR:
        return f"_linear({', '.join(args)})"
    call: PrimCall = node.target
    fn = f"_impl_{len(ns)}"
    ns[fn] = call.prim.impl
    if call.cast is not None:
        ns[f"{fn}_dt"] = call.cast.np
        args = [f"{a}.astype({fn}_dt, copy=False)" for a in args]
    kw = "".join(f", {k}={fn}_p[{k!r}]" for k in call.params)
    if call.params:
        ns[f"{fn}_p"] = call.params
        if not args:
            kw = kw[2:]
    return f"_arr({fn}({', '.join(args)}{kw}))"


def inductor(gm: GraphModule, example_inputs: list) -> Callable[..., Any]:
    """Generated NumPy code (forward, plus a compiled backward when gradients are recorded);
    the graph's own code when the graph is outside what the generators support."""
    if _optimisable(gm, example_inputs):
        src, ns = numpy_source(gm)
    elif joint_supported(gm, example_inputs):
        src, ns = numpy_source(gm, joint=True)
    else:
        return gm.forward
    gm.numpy_code = src
    exec(compile(src, f"<hookgrad inductor {id(gm):x}>", "exec"), ns)  # noqa: S102
    if _optimisable(gm, example_inputs):
        return ns["forward"]
    return JointProgram(gm, ns["forward"])
