"""``torch._C._functions``: `DelayedError`. Mirrors: ``torch._C._functions`` (a subset)."""

from __future__ import annotations

from typing import Any

from hookgrad.autograd.function import Function

__all__ = ["DelayedError"]


class _DelayedErrorFunction(Function):
    @staticmethod
    def forward(ctx: Any, msg: str, *inputs: Any) -> Any:
        ctx.msg = msg
        return tuple(x.detach() for x in inputs)

    @staticmethod
    def backward(ctx: Any, *grads: Any) -> Any:
        raise RuntimeError(ctx.msg)


class DelayedError:
    """A node that passes tensors through and raises `msg` when backward reaches it.

    ``DelayedError(msg, num_inputs)(*tensors)`` returns aliases of the tensors (one tensor when
    `num_inputs` is 1) whose backward raises ``RuntimeError(msg)``. `msg` may be bytes.

    Mirrors: ``torch._C._functions.DelayedError``.
    """

    def __init__(self, msg: str | bytes, num_inputs: int) -> None:
        self.msg = msg.decode() if isinstance(msg, bytes) else msg
        self.num_inputs = num_inputs

    def __call__(self, *inputs: Any) -> Any:
        if len(inputs) != self.num_inputs:
            raise TypeError(f"DelayedError expects {self.num_inputs} inputs, got {len(inputs)}")
        outs = _DelayedErrorFunction.apply(self.msg, *inputs)
        outs = outs if isinstance(outs, tuple) else (outs,)
        return outs[0] if len(outs) == 1 else outs
