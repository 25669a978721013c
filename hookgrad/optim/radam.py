"""RAdam (rectified Adam). Mirrors ``torch.optim.RAdam``."""

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

__all__ = ["RAdam", "radam"]


class RAdam(Optimizer):
    """RAdam: Adam whose adaptive step is switched on (and rectified) once the variance of the
    adaptive learning rate is tractable; before that, plain momentum SGD.

    Args:
        params: tensors or parameter groups to optimize.
        lr: learning rate (default 1e-3).
        betas: coefficients of the running averages of the gradient and its square.
        eps: added to the denominator (default 1e-8).
        weight_decay: weight decay (default 0).
        decoupled_weight_decay: decay the parameters directly (RAdamW).
        foreach: accepted for API parity.
        maximize: maximize the objective instead of minimizing it.
        capturable, differentiable: must be False.

    Raises:
        ValueError: an out-of-range hyper-parameter (same messages as torch).

    Mirrors: ``torch.optim.RAdam`` (single-tensor path).
    """

    def __init__(self, params: Any, lr: float = 1e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 0, decoupled_weight_decay: bool = False,
                 *, foreach: bool | None = None, maximize: bool = False,
                 capturable: bool = False, differentiable: bool = False) -> None:
        check_adam_like(lr, eps, betas, weight_decay)
        _reject_unsupported(differentiable, None, capturable)
        defaults = {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay,
                    "maximize": maximize, "foreach": foreach, "capturable": capturable,
                    "decoupled_weight_decay": decoupled_weight_decay,
                    "differentiable": differentiable}
        super().__init__(params, defaults)

    _GROUP_DEFAULTS = (("foreach", None), ("maximize", False), ("differentiable", False),
                       ("decoupled_weight_decay", False), ("capturable", False))
    _TENSOR_STEPS = True

    def _init_state(self, state: dict[str, Any], p: Tensor, group: dict[str, Any]) -> None:
        state["step"] = _new_step()
        state["exp_avg"] = _zeros_like(p)
        state["exp_avg_sq"] = _zeros_like(p)

    @_use_grad_for_differentiable
    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Perform a single optimization step.

        Mirrors: ``torch.optim.RAdam.step``.
        """
        loss = _closure_loss(closure) if closure is not None else None
        for group in self.param_groups:
            params, grads, states = self._params_with_state(group)
            beta1, beta2 = group["betas"]
            radam(params, grads, [s["exp_avg"] for s in states],
                  [s["exp_avg_sq"] for s in states], [s["step"] for s in states],
                  beta1=beta1, beta2=beta2, lr=group["lr"], weight_decay=group["weight_decay"],
                  eps=group["eps"], decoupled_weight_decay=group["decoupled_weight_decay"],
                  maximize=group["maximize"])
        return loss


def radam(params: list[Tensor], grads: list[Tensor], exp_avgs: list[Tensor],
          exp_avg_sqs: list[Tensor], state_steps: list[Tensor], *, beta1: float, beta2: float,
          lr: float, weight_decay: float, eps: float, decoupled_weight_decay: bool,
          maximize: bool) -> None:
    """Apply the RAdam update in place.

    Mirrors: ``torch.optim.radam.radam`` with ``foreach=False``.
    """
    lr = float(lr)
    rho_inf = 2 / (1 - beta2) - 1
    for i, param in enumerate(params):
        p = _arr(param)
        xp = _backend.namespace_of(p)
        grad = _arr(grads[i])
        g = -grad if maximize else grad
        state_steps[i]._data += 1
        _bump(state_steps[i])
        step = float(state_steps[i]._data)
        if weight_decay != 0:
            if decoupled_weight_decay:
                p *= 1 - lr * weight_decay
            else:
                g = g + weight_decay * p
        exp_avg, exp_avg_sq = _arr(exp_avgs[i]), _arr(exp_avg_sqs[i])
        _lerp_(exp_avg, g, 1 - beta1)
        exp_avg_sq *= beta2
        exp_avg_sq += (1 - beta2) * g * g
        bias_correction1 = 1 - beta1**step
        bias_correction2 = 1 - beta2**step
        corrected = exp_avg / bias_correction1
        rho_t = rho_inf - 2 * step * (beta2**step) / bias_correction2
        if rho_t > 5.0:
            rect = ((rho_t - 4) * (rho_t - 2) * rho_inf
                    / ((rho_inf - 4) * (rho_inf - 2) * rho_t)) ** 0.5
            sq = xp.sqrt(exp_avg_sq)
            sq += eps
            adaptive = (1 / sq) * (bias_correction2**0.5)  # scalar / tensor: reciprocal, mul
            p -= corrected * lr * adaptive * rect
        else:
            p -= corrected * lr
        _bump(exp_avgs[i])
        _bump(exp_avg_sqs[i])
        _bump(param)
