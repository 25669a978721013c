"""``while_loop``: the loop operator of PyTorch's control-flow higher-order ops."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

__all__ = ["while_loop"]


def while_loop(cond_fn: Callable[..., Any], body_fn: Callable[..., Any],
               carried_inputs: Sequence[Any]) -> Any:
    """Run ``carried = body_fn(*carried)`` while ``cond_fn(*carried)`` holds.

    Returns the carried values as a tuple when the body never runs, else the body's last
    result as it returned it (PyTorch's eager behaviour).

    Raises:
        RuntimeError: `carried_inputs` is not a tuple or list.

    Mirrors: ``torch._higher_order_ops.while_loop``.

    Example:
        >>> import hookgrad
        >>> from hookgrad._higher_order_ops import while_loop
        >>> while_loop(lambda i: i < 3, lambda i: (i + 1,), (hookgrad.tensor(0.0),))
        (tensor(3.),)
    """
    if not isinstance(carried_inputs, (tuple, list)):
        raise RuntimeError("while_loop: carried_inputs must be a tuple or a list, got "
                           f"{type(carried_inputs).__name__}")
    carried = tuple(carried_inputs)
    result: Any = carried
    while bool(cond_fn(*carried)):
        result = body_fn(*carried)
        carried = tuple(result) if isinstance(result, (tuple, list)) else (result,)
    return result
