"""``SparseAdam``: Adam for sparse gradients; hookgrad's gradients are always dense.

Mirrors: ``torch.optim.SparseAdam``. Construction validates the hyper-parameters as PyTorch's
does (every hookgrad parameter is dense and real, as it requires); a step with any gradient
raises PyTorch's RuntimeError for dense gradients, and a step without gradients does nothing,
which is what PyTorch's SparseAdam does with every tensor hookgrad can make.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from hookgrad.autograd.grad_mode import enable_grad, no_grad
from hookgrad.optim.optimizer import Optimizer

__all__ = ["SparseAdam"]


class SparseAdam(Optimizer):
    """Mirrors: ``torch.optim.SparseAdam`` (see the module docstring)."""

    def __init__(self, params: Any, lr: float = 1e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, maximize: bool = False) -> None:
        if not 0.0 < lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 < eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= betas[0] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
        if not 0.0 <= betas[1] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
        super().__init__(params, {"lr": lr, "betas": betas, "eps": eps, "maximize": maximize})

    def step(self, closure: Callable | None = None) -> Any:
        """Raises for any (dense) gradient; returns the closure's loss otherwise."""
        loss = None
        if closure is not None:
            with enable_grad():
                loss = closure()
        with no_grad():
            for group in self.param_groups:
                for p in group["params"]:
                    if p.grad is not None:
                        raise RuntimeError("SparseAdam does not support dense gradients, please "
                                           "consider Adam instead")
        return loss
