"""``hookgrad.cond``: the branch operator of PyTorch's control-flow higher-order ops."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from hookgrad._tensor import Tensor

__all__ = ["cond"]


def cond(pred: Any, true_fn: Callable[..., Any], false_fn: Callable[..., Any],
         operands: Sequence[Any] | Tensor = ()) -> Any:
    """``true_fn(*operands)`` if `pred` else ``false_fn(*operands)``.

    Eagerly this is the branch. Inside a compiled region a tensor predicate is data-dependent
    control flow, so the region breaks the graph there and the call runs eagerly (sound; the
    graph does not hold both branches as PyTorch's does).

    Raises:
        RuntimeError: `pred` is a tensor of more than one element (PyTorch's message).

    Mirrors: ``torch.cond``.

    Example:
        >>> import hookgrad
        >>> hookgrad.cond(hookgrad.tensor(True), lambda x: x + 1, lambda x: x - 1,
        ...               (hookgrad.ones(2),))
        tensor([2., 2.])
    """
    if isinstance(pred, Tensor):
        if pred.numel() != 1:
            raise RuntimeError("Expected pred to be bool or single-element tensor, but got "
                               f"{pred}.")
        pred = bool(pred)
    return (true_fn if pred else false_fn)(*operands)
