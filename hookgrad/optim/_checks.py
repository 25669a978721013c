"""Constructor checks shared by Adamax, NAdam and RAdam (PyTorch's messages and order)."""

from __future__ import annotations

from typing import Any

from hookgrad.optim.optimizer import _check_lr


def check_adam_like(lr: Any, eps: float, betas: tuple[float, float], weight_decay: float) -> None:
    """Learning rate, epsilon, both betas and weight decay, in PyTorch's order.

    Raises:
        ValueError: on the first out-of-range value (PyTorch's message).
    """
    _check_lr(lr)
    if not 0.0 <= eps:
        raise ValueError(f"Invalid epsilon value: {eps}")
    if not 0.0 <= betas[0] < 1.0:
        raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
    if not 0.0 <= betas[1] < 1.0:
        raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
    if not 0.0 <= weight_decay:
        raise ValueError(f"Invalid weight_decay value: {weight_decay}")
