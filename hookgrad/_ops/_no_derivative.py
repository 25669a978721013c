"""Primitives that hand a computed result through and have no derivative in PyTorch.

Some ops compute in the functional layer (they need a generator, or LAPACK-style host code) and
PyTorch records them with a node named ``NotImplemented`` that raises when backward (or forward
AD) reaches it. `passthrough_without_derivative` registers such a primitive: its last input is
the computed result (non-differentiable), the others get the raising rules.
"""

from __future__ import annotations

from typing import Any

from hookgrad._ops.registry import Primitive, defop

__all__ = ["passthrough_without_derivative"]


def passthrough_without_derivative(name: str, inputs: tuple[str, ...], why: str) -> Primitive:
    """Register primitive `name` on ``(*inputs, result)`` whose rules raise PyTorch's error."""
    message = f"derivative for aten::{name} is not implemented"

    def vjp(grad: Any) -> Any:
        raise RuntimeError(message)

    def jvp(t: Any) -> Any:
        raise RuntimeError(message)

    return defop(
        name,
        impl=lambda *arrays: arrays[-1].copy(),
        inputs=(*inputs, "result"),
        nondifferentiable={"result": why},
        node_name="NotImplemented",
        vjp={arg: vjp for arg in inputs},
        jvp={arg: jvp for arg in inputs},
    )
