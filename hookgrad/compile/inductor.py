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

from hookgrad._config import STATE
from hookgrad._tensor import Tensor
from hookgrad.compile.codegen.forward import numpy_source
from hookgrad.compile.codegen.kernels import numba_mode
from hookgrad.compile.graph import GraphModule
from hookgrad.compile.joint import JointProgram, joint_supported, requires_grad_names
from hookgrad.compile.recorder import PrimCall, getitem
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
        return ns["forward"]
    program = JointProgram(gm, ns["forward"])
    if numba_mode():
        program.fuse(gm, example_inputs)
    return program
