"""Primitives that hand a computed result through and have no derivative in PyTorch.

Some ops compute in the functional layer (they need a generator, or LAPACK-style host code) and
PyTorch records them with a node named ``NotImplemented`` that raises when backward (or forward
AD) reaches it. `passthrough_without_derivative` registers such a primitive: its last input is
the computed result (non-differentiable), the others get the raising rules.
"""

from __future__ import annotations

from typing import Any

from hookgrad._ops.registry import Primitive, defop

__all__ = ["passthrough_without_derivative", "UNIQUE", "UNIQUE_DIM"]


def passthrough_without_derivative(name: str, inputs: tuple[str, ...], why: str,
                                   node_name: str = "NotImplemented",
                                   error: type = RuntimeError, message: str = "") -> Primitive:
    """Register primitive `name` on ``(*inputs, result)`` whose rules raise PyTorch's error.

    Ops PyTorch lists with a ``not_implemented`` formula have a node of their own name
    (`node_name`) and raise `error` with `message` from it.
    """
    message = message or f"derivative for aten::{name} is not implemented"

    def vjp(grad: Any) -> Any:
        raise error(message)

    def jvp(t: Any) -> Any:
        raise error(message)

    return defop(
        name,
        impl=lambda *arrays: arrays[-1].copy(order="K"),  # the result keeps its layout
        inputs=(*inputs, "result"),
        nondifferentiable={"result": why},
        node_name=node_name,
        vjp={arg: vjp for arg in inputs},
        jvp={arg: jvp for arg in inputs},
    )


# torch.unique's values: PyTorch records a node whose backward raises (its `not_implemented`)
UNIQUE = passthrough_without_derivative(
    "_unique2", ("self",), "the distinct values, computed by the caller",
    node_name="Unique2Backward0", error=NotImplementedError,
    message="the derivative for '_unique2' is not implemented.")
UNIQUE_DIM = passthrough_without_derivative(
    "unique_dim", ("self",), "the distinct slices, computed by the caller",
    node_name="UniqueDimBackward0", error=NotImplementedError,
    message="the derivative for 'unique_dim' is not implemented.")
