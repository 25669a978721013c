"""Mirrors: ``torch.utils._typing_utils`` (typing helpers PyTorch's sources import)."""

from __future__ import annotations

from typing import Any, Callable

__all__ = ["copy_method_params", "not_none"]


def copy_method_params(source_method: Callable) -> Callable[[Callable], Callable]:
    """A decorator giving a method `source_method`'s signature for type checkers (no-op at run time).

    Mirrors: ``torch.utils._typing_utils.copy_method_params``.
    """
    def return_func(func: Callable) -> Callable:
        return func
    return return_func


def not_none(obj: Any) -> Any:
    """Mirrors: ``torch.utils._typing_utils.not_none``."""
    if obj is None:
        raise TypeError("Invariant encountered: value was None when it should not be")
    return obj
