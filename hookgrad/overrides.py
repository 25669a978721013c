"""``torch.overrides``: the ``__torch_function__`` protocol helpers tools call.

hookgrad tensors do not implement ``__torch_function__`` (subclasses are not dispatched through
it), so `has_torch_function` is always False and code that checks it takes its plain path.

Mirrors: ``torch.overrides`` (the query helpers).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from hookgrad.autograd._torch_function import (
    handle_torch_function,
    has_torch_function,
    has_torch_function_unary,
    has_torch_function_variadic,
    is_tensor_like,
)

__all__ = ["has_torch_function", "has_torch_function_unary", "has_torch_function_variadic",
           "is_tensor_like", "handle_torch_function", "wrap_torch_function"]


def wrap_torch_function(dispatcher: Callable[..., Any]) -> Callable[..., Any]:
    """Decorator routing `func` through `handle_torch_function` when an argument overrides it.

    Mirrors: ``torch.overrides.wrap_torch_function``.
    """
    def inner(func: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(func)
        def wrapped(*args: Any, **kwargs: Any) -> Any:
            relevant = dispatcher(*args, **kwargs)
            if has_torch_function(relevant):
                return handle_torch_function(wrapped, relevant, *args, **kwargs)
            return func(*args, **kwargs)
        return wrapped
    return inner


# torch function modes (Lightning's init contexts subclass TorchFunctionMode; issue 21)
from hookgrad._function_mode import (  # noqa: E402
    BaseTorchFunctionMode,
    TorchFunctionMode,
    _get_current_function_mode,
    _get_current_function_mode_stack,
    _len_torch_function_stack,
)

__all__ += ["TorchFunctionMode", "BaseTorchFunctionMode"]
