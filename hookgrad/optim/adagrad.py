"""Adagrad. Mirrors ``torch.optim.Adagrad``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from hookgrad import _backend
from hookgrad._tensor import Tensor
from hookgrad.optim._multi_tensor import check_fused
from hookgrad.optim.optimizer import (
    Optimizer,
    _arr,
    _bump,
    _check_lr,
    _closure_loss,
    _new_step,
    _reject_unsupported,
    _use_grad_for_differentiable,
)

__all__ = ["Adagrad", "adagrad"]


class Adagrad(Optimizer):
    """Adagrad, with optional learning-rate decay, weight decay and maximisation.

    State (``step`` and the ``sum`` accumulator) is created for every parameter at
    construction time, as torch does.

    Args:
        params: tensors or parameter groups to optimize.
        lr: learning rate (default 1e-2).
        lr_decay: learning-rate decay (default 0).
        weight_decay: L2 penalty (default 0).
        initial_accumulator_value: starting value of the ``sum`` accumulator (default 0).
        eps: term added to the denominator for numerical stability (default 1e-10).
        foreach: accepted for API parity; hookgrad always runs the for-loop path.
        maximize: maximize the objective instead of minimizing it.
        differentiable: must be False.
        fused: the fused update (CPU tensors supported, as in PyTorch; not with
            ``foreach`` or ``differentiable``); the same arithmetic per element here.

    Example:
        >>> import hookgrad
        >>> w = hookgrad.zeros(1, requires_grad=True)
        >>> w.grad = hookgrad.ones(1)
        >>> hookgrad.optim.Adagrad([w], lr=0.1).step()
        >>> [round(v, 4) for v in w.tolist()]
        [-0.1]

    Mirrors: ``torch.optim.Adagrad`` (dense single-tensor path).
    """

    def __init__(
        self,
        params: Any,
        lr: float = 1e-2,
        lr_decay: float = 0,
        weight_decay: float = 0,
        initial_accumulator_value: float = 0,
        eps: float = 1e-10,
        foreach: bool | None = None,
        *,
        maximize: bool = False,
        differentiable: bool = False,
        fused: bool | None = None,
    ) -> None:
        _check_lr(lr)
        if not lr_decay >= 0.0:
            raise ValueError(f"Invalid lr_decay value: {lr_decay}")
        if not weight_decay >= 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if not initial_accumulator_value >= 0.0:
            raise ValueError(
                f"Invalid initial_accumulator_value value: {initial_accumulator_value}"
            )
        if not eps >= 0.0:
            raise ValueError(f"Invalid epsilon value: {eps}")
        _reject_unsupported(differentiable and not fused, None)
        defaults = {
            "lr": lr, "lr_decay": lr_decay, "eps": eps, "weight_decay": weight_decay,
            "initial_accumulator_value": initial_accumulator_value, "foreach": foreach,
            "maximize": maximize, "differentiable": differentiable, "fused": fused,
        }
        super().__init__(params, defaults)
        for group in self.param_groups:
            for p in group["params"]:
                self._init_state(self.state[p], p, group)
        check_fused(fused, foreach, differentiable)

    def _init_state(self, state: dict[str, Any], p: Tensor, group: dict[str, Any]) -> None:
        xp = _backend.namespace_of(p._data)
        state["step"] = _new_step()
        state["sum"] = Tensor._make(
            xp.full_like(p._data, self.defaults["initial_accumulator_value"])
        )

    _GROUP_DEFAULTS = (("foreach", None), ("maximize", False), ("differentiable", False),
                       ("fused", None))
    _TENSOR_STEPS = True

    @_use_grad_for_differentiable
    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Perform a single optimization step.

        Args:
            closure: re-evaluates the model and returns the loss (run with grad enabled).

        Returns:
            The closure's loss, or ``None``.

        Mirrors: ``torch.optim.Adagrad.step``.
        """
        loss = _closure_loss(closure) if closure is not None else None
        for group in self.param_groups:
            params, grads, states = self._params_with_state(group)
            adagrad(params, grads, [s["sum"] for s in states], [s["step"] for s in states],
                    lr=group["lr"], weight_decay=group["weight_decay"],
                    lr_decay=group["lr_decay"], eps=group["eps"], maximize=group["maximize"])
        return loss


def adagrad(
    params: list[Tensor],
    grads: list[Tensor],
    state_sums: list[Tensor],
    state_steps: list[Tensor],
    *,
    lr: float,
    weight_decay: float,
    lr_decay: float,
    eps: float,
    maximize: bool,
) -> None:
    """Apply the Adagrad update to each parameter and its accumulator in place.

    Mirrors: ``torch.optim.adagrad.adagrad`` with ``foreach=False`` (dense gradients).
    """
    lr, weight_decay = float(lr), float(weight_decay)
    for param, grad_t, sum_t, step_t in zip(params, grads, state_sums, state_steps, strict=True):
        p = _arr(param)
        xp = _backend.namespace_of(p)
        step_t._data += 1
        _bump(step_t)
        step = float(step_t._data)
        grad = _arr(grad_t)
        g = -grad if maximize else grad
        if weight_decay != 0:
            g = g + weight_decay * p
        clr = lr / (1 + (step - 1) * lr_decay)
        state_sum = _arr(sum_t)
        tmp = g * g  # addcmul_(grad, grad, value=1)
        state_sum += tmp
        _bump(sum_t)
        std = xp.sqrt(state_sum)
        std += eps
        np.multiply(g, -clr, out=tmp)  # addcdiv_(grad, std, value=-clr)
        tmp /= std
        p += tmp
        _bump(param)
