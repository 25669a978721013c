"""`Variable`: the pre-0.4 wrapper, now the same thing as a tensor.

``isinstance(t, Variable)`` is true for every tensor, and ``Variable(t, requires_grad=...)``
returns a detached alias of ``t`` (same memory) with the requested flag, as in PyTorch.
"""

from __future__ import annotations

from typing import Any

from hookgrad._tensor import Tensor
from hookgrad.autograd.engine import ENGINE

__all__ = ["Variable", "VariableMeta", "ImperativeEngine"]

ImperativeEngine = type(ENGINE)


class VariableMeta(type):
    """The metaclass making every tensor an instance of `Variable`.

    Mirrors: ``torch.autograd.variable.VariableMeta``.
    """

    def __instancecheck__(cls, other: Any) -> bool:
        return isinstance(other, Tensor)

    def __call__(cls, data: Any = None, requires_grad: bool = False, volatile: bool = False,
                 **kwargs: Any) -> Tensor:
        if data is None:
            from hookgrad._functional.creation import empty

            return empty(0)
        if not isinstance(data, Tensor):
            raise TypeError(f"Variable data has to be a tensor, but got {type(data).__name__}")
        out = data.detach()
        if requires_grad:
            out.requires_grad_(True)
        return out


class Variable(metaclass=VariableMeta):
    """Legacy tensor wrapper: every tensor is a Variable. Mirrors: ``torch.autograd.Variable``.

    ``Variable._execution_engine`` is the engine (for ``queue_callback``).

    Example:
        >>> import hookgrad as torch
        >>> v = torch.autograd.Variable(torch.ones(2), requires_grad=True)
        >>> v.requires_grad, isinstance(torch.ones(1), torch.autograd.Variable)
        (True, True)
    """

    _execution_engine = ENGINE
