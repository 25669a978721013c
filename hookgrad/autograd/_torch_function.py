"""The ``__torch_function__`` query helpers, below autograd so every layer can use them.

hookgrad tensors do not dispatch through ``__torch_function__``: `has_torch_function` is always
False and code that checks it takes its plain path. `hookgrad.overrides` re-exports these.
"""

from __future__ import annotations

from typing import Any

from hookgrad._tensor import Tensor

__all__ = ["has_torch_function", "has_torch_function_unary", "has_torch_function_variadic",
           "is_tensor_like", "handle_torch_function"]


def has_torch_function(relevant_args: Any) -> bool:
    """Always False (no ``__torch_function__`` dispatch).

    Mirrors: ``torch.overrides.has_torch_function``.
    """
    return False


def has_torch_function_unary(obj: Any) -> bool:
    """Always False. Mirrors: ``torch.overrides.has_torch_function_unary``."""
    return False


def has_torch_function_variadic(*args: Any) -> bool:
    """Always False. Mirrors: ``torch.overrides.has_torch_function_variadic``."""
    return False


def is_tensor_like(inp: Any) -> bool:
    """Whether `inp` is a tensor or defines ``__torch_function__``.

    Example:
        >>> import hookgrad as torch
        >>> torch.overrides.is_tensor_like(torch.ones(1)), torch.overrides.is_tensor_like(1.0)
        (True, False)

    Mirrors: ``torch.overrides.is_tensor_like``.
    """
    return isinstance(inp, Tensor) or hasattr(inp, "__torch_function__")


def handle_torch_function(public_api: Any, relevant_args: Any, *args: Any, **kwargs: Any) -> Any:
    """Call ``__torch_function__`` of the arguments that define one, subclasses first.

    Raises ``TypeError`` when none of `relevant_args` defines it or all return NotImplemented.

    Mirrors: ``torch.overrides.handle_torch_function``.
    """
    overloaded: list = []
    for arg in relevant_args:
        cls = type(arg)
        if hasattr(cls, "__torch_function__") and arg not in overloaded:
            # a subclass goes before the first of its bases already collected
            pos = next((i for i, o in enumerate(overloaded) if issubclass(cls, type(o))),
                       len(overloaded))
            overloaded.insert(pos, arg)
    types = tuple(type(a) for a in overloaded)
    for arg in overloaded:
        result = arg.__torch_function__(public_api, types, args, kwargs)
        if result is not NotImplemented:
            return result
    name = f"{public_api.__module__}.{public_api.__name__}"
    raise TypeError(f"no implementation found for '{name}' on types that implement "
                    f"__torch_function__: {[type(a) for a in overloaded]}")
