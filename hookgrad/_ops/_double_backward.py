"""Gradients of ops whose PyTorch backward is one op reading saved values, under create_graph.

Layer 3 (imports the dispatcher and Tensor).

NOTE [Double-backward reads]
PyTorch computes the gradients of some ops with one backward op that takes saved values
(``native_batch_norm_backward(grad_out, input, weight, ...)``, ``convolution_backward``,
``nll_loss_backward(grad, self, ...)``, ``reflection_pad1d_backward(grad, self, ...)``). Under
``create_graph=True`` that backward op is recorded with all of those as inputs, so *every*
gradient it returns requires grad as soon as one of them does: a batch norm's bias gradient
(a sum of the incoming gradient) has a graph when the input requires grad, an ``nll_loss``
input gradient (a constant mask times the incoming gradient) has one too. hookgrad's rules are
written with hookgrad ops and depend only on what their formula reads, so such a gradient
would come out without a graph.

An op declares what its PyTorch backward op reads (``defop(double_reads=...)``: per input
whose gradient it computes, the saved values). Under create_graph, `tie_gradients` makes each
gradient depend on those of them that require grad through a `BACKWARD_TIE` node: the value
passes through unchanged, and a second backward gives the tied values either nothing (the
value is not a function of them beyond what the formula already expresses: PyTorch's
double-backward formulas give them an undefined gradient, ``double_zero=False``) or zeros
(PyTorch's ``self: zeros_like(grad)`` entries, ``double_zero=True``).
"""

from __future__ import annotations

from typing import Any

from hookgrad._backend import namespace_of
from hookgrad._dispatch import bind
from hookgrad._ops.registry import Primitive, defop
from hookgrad._tensor import Tensor


def _zeros_or_none(grad: Any, source_shape: tuple, zero: bool) -> Any:
    if not zero:
        return None
    return Tensor._make(namespace_of(grad._data).zeros(tuple(source_shape),
                                                       dtype=grad._data.dtype))


BACKWARD_TIE = defop(
    "_backward_tie",
    impl=lambda self, source, zero: self.view(),  # the gradient itself, unchanged
    inputs=("self", "source"),
    params=("zero",),
    node_name="BackwardTieBackward0",
    vjp={"self": lambda grad: grad, "source": _zeros_or_none},
    jvp="linear",
)


def tie_gradients(prim: Primitive, results: tuple, saved: dict) -> tuple:
    """`results` (one gradient per differentiable input of `prim`, None where not computed)
    made to depend on the saved values `prim`'s PyTorch backward op reads (see the NOTE)."""
    reads, zero = prim.double_reads, prim.double_zero
    names = [prim.inputs[i] for i in prim.diff_inputs]
    out = list(results)
    for k, (name, r) in enumerate(zip(names, results)):
        sources = reads.get(name)
        if r is None or not sources or (r.requires_grad and not zero):
            continue
        for s in sources:
            v = saved.get(s)
            if type(v) is Tensor and v.requires_grad and (zero or not r.requires_grad):
                r = bind(BACKWARD_TIE, (r, v), {"zero": zero})
        out[k] = r
    return tuple(out)


__all__ = ["BACKWARD_TIE", "tie_gradients"]
