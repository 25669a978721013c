"""``torch.overrides``: the ``__torch_function__`` protocol helpers tools call.

hookgrad tensors do not implement ``__torch_function__`` (subclasses are not dispatched through
it), so `has_torch_function` is always False and code that checks it takes its plain path.

Mirrors: ``torch.overrides`` (the query helpers).
"""

from __future__ import annotations

from typing import Any

from hookgrad._tensor import Tensor

__all__ = ["has_torch_function", "has_torch_function_unary", "has_torch_function_variadic",
           "is_tensor_like", "handle_torch_function"]


def has_torch_function(relevant_args: Any) -> bool:
    """Always False (no ``__torch_function__`` dispatch). Mirrors: ``has_torch_function``."""
    return False


def has_torch_function_unary(obj: Any) -> bool:
    """Always False. Mirrors: ``torch.overrides.has_torch_function_unary``."""
    return False


def has_torch_function_variadic(*args: Any) -> bool:
    """Always False. Mirrors: ``torch.overrides.has_torch_function_variadic``."""
    return False


def is_tensor_like(inp: Any) -> bool:
    """Whether `inp` is a tensor. Mirrors: ``torch.overrides.is_tensor_like``."""
    return isinstance(inp, Tensor)


def handle_torch_function(public_api: Any, relevant_args: Any, *args: Any, **kwargs: Any) -> Any:
    """Call `public_api` directly (nothing overrides it). Mirrors: ``handle_torch_function``."""
    return public_api(*args, **kwargs)


# torch function modes (Lightning's init contexts subclass TorchFunctionMode; issue 21)
from hookgrad._function_mode import (  # noqa: E402
    BaseTorchFunctionMode,
    TorchFunctionMode,
    _get_current_function_mode,
    _get_current_function_mode_stack,
    _len_torch_function_stack,
)

__all__ += ["TorchFunctionMode", "BaseTorchFunctionMode"]
