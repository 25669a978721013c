"""Adamax (Adam with an infinity-norm second moment). Mirrors ``torch.optim.Adamax``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from hookgrad import _backend
from hookgrad._tensor import Tensor
from hookgrad.optim._checks import check_adam_like
from hookgrad.optim.adam import _lerp_
from hookgrad.optim.optimizer import (
    Optimizer,
    _arr,
    _bump,
    _closure_loss,
    _new_step,
    _reject_unsupported,
    _use_grad_for_differentiable,
    _zeros_like,
)

__all__ = ["Adamax", "adamax"]


class Adamax(Optimizer):
    """Adamax: the second moment is a decayed running maximum of ``|grad|``.

    Args:
        params: tensors or parameter groups to optimize.
        lr: learning rate (default 2e-3).
        betas: decay of the first moment and of the running maximum.
        eps: added to ``|grad|`` (default 1e-8).
        weight_decay: L2 penalty (default 0).
        foreach: accepted for API parity.
        maximize: maximize the objective instead of minimizing it.
        differentiable, capturable: must be False.

    Raises:
        ValueError: an out-of-range hyper-parameter (same messages as torch).

    Mirrors: ``torch.optim.Adamax`` (single-tensor path).
    """

    def __init__(self, params: Any, lr: float = 2e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 0, foreach: bool | None = None, *,
                 maximize: bool = False, differentiable: bool = False,
                 capturable: bool = False) -> None:
        check_adam_like(lr, eps, betas, weight_decay)
        _reject_unsupported(differentiable, None, capturable)
        defaults = {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay,
                    "foreach": foreach, "maximize": maximize, "differentiable": differentiable,
                    "capturable": capturable}
        super().__init__(params, defaults)

    _GROUP_DEFAULTS = (("foreach", None), ("maximize", False), ("differentiable", False),
                       ("capturable", False))
    _TENSOR_STEPS = True

    def _init_state(self, state: dict[str, Any], p: Tensor, group: dict[str, Any]) -> None:
        state["step"] = _new_step()
        state["exp_avg"] = _zeros_like(p)
        state["exp_inf"] = _zeros_like(p)

    @_use_grad_for_differentiable
    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Perform a single optimization step.

        Mirrors: ``torch.optim.Adamax.step``.
        """
        loss = _closure_loss(closure) if closure is not None else None
        for group in self.param_groups:
            params, grads, states = self._params_with_state(group)
            beta1, beta2 = group["betas"]
            adamax(params, grads, [s["exp_avg"] for s in states],
                   [s["exp_inf"] for s in states], [s["step"] for s in states],
                   eps=group["eps"], beta1=beta1, beta2=beta2, lr=group["lr"],
                   weight_decay=group["weight_decay"], maximize=group["maximize"])
        return loss


def adamax(params: list[Tensor], grads: list[Tensor], exp_avgs: list[Tensor],
           exp_infs: list[Tensor], state_steps: list[Tensor], *, eps: float, beta1: float,
           beta2: float, lr: float, weight_decay: float, maximize: bool) -> None:
    """Apply the Adamax update in place.

    Mirrors: ``torch.optim.adamax.adamax`` with ``foreach=False``.
    """
    lr = float(lr)
    for i, param in enumerate(params):
        p = _arr(param)
        xp = _backend.namespace_of(p)
        grad = _arr(grads[i])
        g = -grad if maximize else grad
        state_steps[i]._data += 1
        _bump(state_steps[i])
        if weight_decay != 0:
            g = g + weight_decay * p
        exp_avg, exp_inf = _arr(exp_avgs[i]), _arr(exp_infs[i])
        _lerp_(exp_avg, g, 1 - beta1)
        exp_inf *= beta2
        norm = xp.abs(g)
        norm += eps
        xp.maximum(exp_inf, norm, out=exp_inf)
        clr = lr / (1 - beta1 ** float(state_steps[i]._data))
        p += -clr * exp_avg / exp_inf  # addcdiv_: value * t1 / t2, left to right
        _bump(exp_avgs[i])
        _bump(exp_infs[i])
        _bump(param)
