"""The optimised backend (``"inductor"``): generated code for a captured graph.

- A graph that needs no autograd (grad mode off, or no input requires grad: both are guarded,
  so this is known when the graph is compiled) and holds only primitives (and ``F.linear``)
  becomes one generated Python function calling each primitive's array implementation on
  NumPy arrays: no `Tensor` objects between ops, no `bind`, no recorder loop.
- A graph that records gradients becomes a `joint.JointProgram`: one autograd node whose
  forward and backward are generated code (NOTE [Generated backward] in codegen/backward.py),
  with intermediate tensor hooks and module backward hooks fired inside the backward. With
  Numba (the ``hookgrad[compile]`` extra; `codegen.kernels`), elementwise chains are fused
  into kernels cached on disk (NOTE [Fused groups] in codegen/fusion.py); without it the same
  graph runs as generated NumPy code.
- Anything else (in-place or multi-output ops, casts, saved-tensor hooks active) runs the
  graph's own code (the ``"eager"`` path), so hooks and gradients keep eager's semantics.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from hookgrad._config import STATE
from hookgrad._tensor import Tensor
from hookgrad.compile.codegen.forward import numpy_source
from hookgrad.compile.codegen.fusion import find_groups
from hookgrad.compile.codegen.kernels import numba_mode
from hookgrad.compile.core.graph import GraphModule
from hookgrad.compile.backends.joint import JointProgram, joint_supported, requires_grad_names
from hookgrad.compile.trace.recorder import PrimCall, getitem
from hookgrad.nn import functional as _F

__all__ = ["inductor", "numpy_source"]

_LINEAR = _F.linear


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


def inductor(gm: GraphModule, example_inputs: list) -> Callable[..., Any]:
    """Generated NumPy code (forward, plus a compiled backward when gradients are recorded);
    the graph's own code when the graph is outside what the generators support."""
    if _optimisable(gm, example_inputs):
        src, ns = numpy_source(gm)
    elif joint_supported(gm, example_inputs):
        src, ns = numpy_source(gm, joint=True,
                               requires=requires_grad_names(gm, example_inputs))
    else:
        return gm.forward
    gm.numpy_code = src
    exec(compile(src, f"<hookgrad inductor {id(gm):x}>", "exec"), ns)  # noqa: S102
    if _optimisable(gm, example_inputs):
        fused = _fused_inference(gm, example_inputs, ns["forward"]) if numba_mode() else None
        return fused or ns["forward"]
    program = JointProgram(gm, ns["forward"])
    if numba_mode():
        program.fuse(gm, example_inputs)
    return program


def _fused_inference(gm: GraphModule, example_inputs: list, plain: Any) -> Any:
    """The inference forward with fused groups (NOTE [Fused groups]), or None without any."""
    nodes = [n for n in gm.graph.nodes if n.op != "output"]
    if len(example_inputs) != sum(n.op == "placeholder" for n in nodes) or not all(
            isinstance(t, Tensor) for t in example_inputs):
        return None
    index = {id(n): i for i, n in enumerate(nodes)}
    steps = [(i, n) for i, n in enumerate(nodes) if n.op == "call_function"]
    probe_src, probe_ns = numpy_source(gm, joint=True)
    exec(compile(probe_src, f"<hookgrad probe {id(gm):x}>", "exec"), probe_ns)  # noqa: S102
    env = probe_ns["forward"](*[t._data for t in example_inputs])[1]
    groups = find_groups(gm.graph.nodes, steps, env, index, list(range(len(nodes))), set())
    if not groups:
        return None
    try:
        src, ns = numpy_source(gm, groups=groups)
    except Exception:  # noqa: BLE001 - a kernel that cannot be built: the plain forward runs
        return None
    gm.fused_code = src
    exec(compile(src, f"<hookgrad fused {id(gm):x}>", "exec"), ns)  # noqa: S102
    return CheckedForward(ns["forward"], plain, example_inputs)


class CheckedForward:
    """A fused inference forward used for inputs of the probe's shapes and dtypes, once its
    first outputs matched the plain forward's (NOTE [Validated variants] in joint.py)."""

    def __init__(self, fused: Any, plain: Any, example_inputs: list) -> None:
        self.fused, self.plain = fused, plain
        self.signature = tuple((t._data.shape, t._data.dtype) for t in example_inputs)
        self.checked = False
        self.error: Exception | None = None

    def __call__(self, *inputs: Tensor) -> Any:
        if self.fused is None or tuple(
                (t._data.shape, t._data.dtype) for t in inputs) != self.signature:
            return self.plain(*inputs)
        if self.checked:
            return self.fused(*inputs)
        want = self.plain(*inputs)
        try:  # the first run also compiles the kernels
            got = self.fused(*inputs)
        except Exception as e:  # noqa: BLE001 - recorded, and the plain code runs
            self.error, self.fused = e, None
            return want
        self.checked = all(np.allclose(g._data, w._data, rtol=1e-4, atol=1e-6, equal_nan=True)
                           and g._data.dtype == w._data.dtype for g, w in zip(got, want))
        if not self.checked:
            self.fused = None
        return want
