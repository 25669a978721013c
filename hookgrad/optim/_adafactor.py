"""Adafactor. Mirrors: ``torch.optim._adafactor`` (``torch.optim.Adafactor``).

Second moments are kept factored for matrices (a row and a column running mean of squared
gradients, whose outer product over the row mean estimates each entry) and whole for vectors.
The running means decay with ``1 - step ** beta2_decay``; the relative step size is
``min(lr, 1 / sqrt(step))`` times the parameter's RMS (at least ``eps[1]``); the update is
clipped so its RMS is at most ``d``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import ml_dtypes
import numpy as np

from hookgrad import _backend
from hookgrad._tensor import Tensor
from hookgrad.autograd.grad_mode import no_grad
from hookgrad.optim.optimizer import (
    Optimizer,
    _arr,
    _bump,
    _closure_loss,
    _new_step,
)

__all__ = ["Adafactor", "adafactor"]


class Adafactor(Optimizer):
    """Adafactor (Shazeer and Stern, 2018) as PyTorch implements it.

    Args:
        params: tensors or parameter groups to optimize.
        lr: the cap of the relative step size (default 1e-2).
        beta2_decay: exponent of the second-moment decay schedule, ``<= 0`` (default -0.8).
        eps: ``(eps1, eps2)``: the floor of the variance estimate (``None``: the dtype's
            machine epsilon) and of the parameter scale (default ``(None, 1e-3)``).
        d: the clipping threshold of the update's RMS, ``>= 1`` (default 1).
        weight_decay: decoupled weight decay (default 0).
        foreach: accepted for API parity; hookgrad runs the for-loop path.
        maximize: maximize the objective instead of minimizing it.

    Mirrors: ``torch.optim.Adafactor``.
    """

    def __init__(self, params: Any, lr: Any = 1e-2, beta2_decay: float = -0.8,
                 eps: tuple = (None, 1e-3), d: float = 1.0, weight_decay: float = 0.0, *,
                 foreach: bool | None = None, maximize: bool = False) -> None:
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
        if not 0.0 >= beta2_decay:
            raise ValueError(f"beta2_decay should be <= 0 but is: {beta2_decay}")
        if eps[0] is not None and not 0.0 <= eps[0]:
            raise ValueError(f"epsilon1 should be >= 0 but is: {eps[0]}")
        if not 0.0 <= eps[1]:
            raise ValueError(f"epsilon2 should be >= 0 but is: {eps[1]}")
        if not 1.0 <= d:
            raise ValueError(f"Clipping threshold d should be >= 1 but is: {d}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"weight_decay should be >= 0 but is: {weight_decay}")
        defaults = {"lr": lr, "beta2_decay": beta2_decay, "eps": eps, "d": d,
                    "weight_decay": weight_decay, "foreach": foreach, "maximize": maximize}
        super().__init__(params, defaults)

    _GROUP_DEFAULTS = (("foreach", None), ("maximize", False))
    _TENSOR_STEPS = True

    def _init_state(self, state: dict[str, Any], p: Tensor, group: dict[str, Any]) -> None:
        g = p._grad._data  # type: ignore[union-attr]
        xp = _backend.namespace_of(g)
        state["step"] = _new_step()
        if g.ndim > 1:
            state["row_var"] = Tensor._make(xp.zeros((*g.shape[:-1], 1), dtype=g.dtype))
            state["col_var"] = Tensor._make(
                xp.zeros((*g.shape[:-2], 1, g.shape[-1]), dtype=g.dtype))
        else:
            state["variance"] = Tensor._make(xp.zeros_like(g))

    @no_grad()  # PyTorch's Adafactor has no differentiable mode
    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Perform a single optimization step. Mirrors: ``torch.optim.Adafactor.step``."""
        loss = _closure_loss(closure) if closure is not None else None
        for group in self.param_groups:
            params, grads, states = self._params_with_state(group)
            eps1, eps2 = group["eps"]
            adafactor(params, grads, states, d=group["d"], lr=group["lr"],
                      beta2_decay=group["beta2_decay"], weight_decay=group["weight_decay"],
                      eps1=eps1, eps2=eps2, maximize=group["maximize"])
        return loss


def _rms(a: Any) -> float:
    return float(np.sqrt((a.astype(np.float64) ** 2).sum())) / math.sqrt(max(a.size, 1))


def adafactor(params: list[Tensor], grads: list[Tensor], states: list[dict], *, d: float,
              lr: Any, beta2_decay: float, weight_decay: float, eps1: float | None,
              eps2: float, maximize: bool) -> None:
    """Apply the Adafactor update to each parameter in place.

    Mirrors: ``torch.optim._adafactor.adafactor`` with ``foreach=False``.
    """
    lr = float(lr)
    for param, grad_t, state in zip(params, grads, states, strict=True):
        p = _arr(param)
        xp = _backend.namespace_of(p)
        grad = -_arr(grad_t) if maximize else _arr(grad_t)
        floor = float(ml_dtypes.finfo(p.dtype).eps) if eps1 is None else eps1
        step_t = state["step"]
        step_t._data += 1
        _bump(step_t)
        step = float(step_t._data)
        decay = step ** beta2_decay
        alpha = max(eps2, _rms(p)) * min(lr, 1 / step ** 0.5)
        if weight_decay != 0:
            p *= 1 - lr * weight_decay
        if grad.ndim > 1:
            row, col = _arr(state["row_var"]), _arr(state["col_var"])
            row += ((grad * grad).sum(axis=-1, keepdims=True) / grad.shape[-1] - row) * decay
            col += ((grad * grad).sum(axis=-2, keepdims=True) / grad.shape[-2] - col) * decay
            _bump(state["row_var"])
            _bump(state["col_var"])
            estimate = xp.matmul(row, col) / xp.maximum(row.mean(axis=-2, keepdims=True), floor)
        else:
            var = _arr(state["variance"])
            var += (grad * grad - var) * decay
            _bump(state["variance"])
            estimate = var.copy()
        update = grad / xp.sqrt(xp.maximum(estimate, floor * floor))
        denom = max(1.0, _rms(update) / d)
        p -= (update * (alpha / denom)).astype(p.dtype, copy=False)
        _bump(param)
