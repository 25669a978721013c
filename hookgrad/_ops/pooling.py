"""Pooling primitives: ``max_pool2d_with_indices``, ``avg_pool2d``, ``_adaptive_avg_pool2d``
and their backward ops.

Layer 3. Each forward op is a primitive because PyTorch shows its own node
(``MaxPool2DWithIndicesBackward0``, ``AvgPool2DBackward0``, ``AdaptiveAvgPool2DBackward0``).
Their backward ops are primitives too (as in ATen), each linear in the incoming gradient, so
double backward is the forward op again (average pools) or a gather at the saved indices (max
pool). A rule is one ``ops.call`` of its backward op: a plain ``backward()`` runs the array
kernel directly, without a node (NOTE [Rule operations]). Inputs are
``[N, C, H, W]`` or unbatched ``[C, H, W]``.

Max pooling saves ``self`` and ``result1`` (the indices), in PyTorch's pack order.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from hookgrad._ops import _pool_kernels as P
from hookgrad._ops._rules import ZERO_SELF
from hookgrad._ops.registry import defop
from hookgrad._tensor import Tensor

Ints = Sequence[int]


def _bind(prim: Any, inputs: tuple, params: dict) -> Any:
    from hookgrad._dispatch import bind

    return bind(prim, inputs, params)


# ---------------------------------------------------------------- max pooling
def _max_impl(
    self: Any, kernel_size: Ints, stride: Ints, padding: Ints, dilation: Ints, ceil_mode: bool
) -> tuple[Any, Any]:
    return P.max_pool2d(
        self, tuple(kernel_size), tuple(stride), tuple(padding), tuple(dilation), ceil_mode
    )


def _gather(t: Tensor, indices: Tensor) -> Tensor:
    """Values of `t` at the flat per-plane `indices` (the adjoint of the max-pool scatter)."""
    idx = indices.flatten(-2)  # type: ignore[attr-defined]
    return t.flatten(-2).gather(-1, idx).reshape(indices.shape)  # type: ignore[attr-defined]


def _max_grad(
    grads: tuple, self: Any, result1: Any, kernel_size: Ints, stride: Ints, dilation: Ints,
    ops: Any,
) -> Any:
    # `self` is read (like PyTorch's formula) so it is saved, in PyTorch's pack order.
    disjoint = P.windows_disjoint(tuple(kernel_size), tuple(stride), tuple(dilation))
    params = {"self_size": tuple(self.shape), "disjoint": disjoint}
    return ops.call(MAX_POOL2D_BACKWARD, (grads[0], self, result1), params)


MAX_POOL2D = defop(
    "max_pool2d_with_indices",
    impl=_max_impl,
    inputs=("self",),
    params=("kernel_size", "stride", "padding", "dilation", "ceil_mode"),
    num_outputs=2,
    nondifferentiable_outputs=(1,),
    saves=("self", "result1"),  # PyTorch's pack order: the input, then the indices
    node_name="MaxPool2DWithIndicesBackward0",
    vjp={"self": _max_grad},
    jvp={"self": lambda t, result1: _gather(t, result1)},
)


def _max_backward_impl(grad_output: Any, self: Any, indices: Any, self_size: Ints,
                       disjoint: bool) -> Any:
    return P.max_pool2d_backward(grad_output, indices, self_size, disjoint)


MAX_POOL2D_BACKWARD = defop(
    "max_pool2d_with_indices_backward",
    impl=_max_backward_impl,
    inputs=("grad_output", "self", "indices"),
    params=("self_size", "disjoint"),
    saves=("indices",),
    node_name="MaxPool2DWithIndicesBackwardBackward0",
    vjp={"grad_output": lambda grad, indices: _gather(grad, indices), **ZERO_SELF},
    nondifferentiable={"indices": "integer indices"},
    jvp="linear",
)


# ---------------------------------------------------------------- average pooling
_AVG_PARAMS = (
    "kernel_size",
    "stride",
    "padding",
    "ceil_mode",
    "count_include_pad",
    "divisor_override",
)


def _avg_impl(
    self: Any,
    kernel_size: Ints,
    stride: Ints,
    padding: Ints,
    ceil_mode: bool,
    count_include_pad: bool,
    divisor_override: int | None,
) -> Any:
    return P.avg_pool2d(
        self,
        tuple(kernel_size),
        tuple(stride),
        tuple(padding),
        ceil_mode,
        count_include_pad,
        divisor_override,
    )


def _avg_backward_impl(
    grad_output: Any,
    self: Any,
    self_size: Ints,
    kernel_size: Ints,
    stride: Ints,
    padding: Ints,
    ceil_mode: bool,
    count_include_pad: bool,
    divisor_override: int | None,
) -> Any:
    # ceil_mode is implied by grad_output's size; it stays a param to mirror ATen's schema
    return P.avg_pool2d_backward(
        grad_output,
        self_size,
        tuple(kernel_size),
        tuple(stride),
        tuple(padding),
        count_include_pad,
        divisor_override,
    )


def _avg_grad(
    grad: Any,
    self: Any,
    kernel_size: Ints,
    stride: Ints,
    padding: Ints,
    ceil_mode: bool,
    count_include_pad: bool,
    divisor_override: int | None,
    ops: Any,
) -> Any:
    params = {
        "kernel_size": kernel_size,
        "stride": stride,
        "padding": padding,
        "ceil_mode": ceil_mode,
        "count_include_pad": count_include_pad,
        "divisor_override": divisor_override,
    }
    # `self` is an input of the backward op (PyTorch's schema): saved, and its requires_grad
    # carries over to the gradient under create_graph
    return ops.call(AVG_POOL2D_BACKWARD, (grad, self), {"self_size": tuple(self.shape), **params})


AVG_POOL2D = defop(
    "avg_pool2d",
    impl=_avg_impl,
    inputs=("self",),
    params=_AVG_PARAMS,
    saves=("self",),
    node_name="AvgPool2DBackward0",
    vjp={"self": _avg_grad},
    jvp="linear",
)


def _avg_backward_grad(
    grad: Tensor,
    kernel_size: Ints,
    stride: Ints,
    padding: Ints,
    ceil_mode: bool,
    count_include_pad: bool,
    divisor_override: int | None,
) -> Tensor:
    """The backward op is linear in its gradient: its own gradient is the forward op."""
    params = {
        "kernel_size": kernel_size,
        "stride": stride,
        "padding": padding,
        "ceil_mode": ceil_mode,
        "count_include_pad": count_include_pad,
        "divisor_override": divisor_override,
    }
    return _bind(AVG_POOL2D, (grad,), params)


AVG_POOL2D_BACKWARD = defop(
    "avg_pool2d_backward",
    impl=_avg_backward_impl,
    inputs=("grad_output", "self"),
    params=("self_size", *_AVG_PARAMS),
    node_name="AvgPool2DBackwardBackward0",
    vjp={"grad_output": _avg_backward_grad, **ZERO_SELF},
    jvp="linear",
)


# ---------------------------------------------------------------- adaptive average pooling
def _adaptive_grad(grad: Any, self: Any, ops: Any) -> Any:
    return ops.call(ADAPTIVE_AVG_POOL2D_BACKWARD, (grad, self), {"self_size": tuple(self.shape)})


ADAPTIVE_AVG_POOL2D = defop(
    "_adaptive_avg_pool2d",
    impl=lambda self, output_size: P.adaptive_avg_pool2d(self, tuple(output_size)),
    inputs=("self",),
    params=("output_size",),
    saves=("self",),
    node_name="AdaptiveAvgPool2DBackward0",
    vjp={"self": _adaptive_grad},
    jvp="linear",
)

ADAPTIVE_AVG_POOL2D_BACKWARD = defop(
    "_adaptive_avg_pool2d_backward",
    impl=lambda grad_output, self, self_size: P.adaptive_avg_pool2d_backward(
        grad_output, self_size),
    inputs=("grad_output", "self"),
    params=("self_size",),
    node_name="AdaptiveAvgPool2DBackwardBackward0",
    vjp={
        "grad_output": lambda grad, grad_output_shape: _bind(
            ADAPTIVE_AVG_POOL2D, (grad,), {"output_size": tuple(grad_output_shape[-2:])}
        ),
        **ZERO_SELF,
    },
    jvp="linear",
)

__all__ = [
    "MAX_POOL2D",
    "MAX_POOL2D_BACKWARD",
    "AVG_POOL2D",
    "AVG_POOL2D_BACKWARD",
    "ADAPTIVE_AVG_POOL2D",
    "ADAPTIVE_AVG_POOL2D_BACKWARD",
]
