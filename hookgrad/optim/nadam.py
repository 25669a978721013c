"""NAdam (Adam with Nesterov momentum). Mirrors ``torch.optim.NAdam``."""

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

__all__ = ["NAdam", "nadam"]


class NAdam(Optimizer):
    """NAdam: Adam whose momentum term looks one step ahead, with a decaying momentum schedule.

    Args:
        params: tensors or parameter groups to optimize.
        lr: learning rate (default 2e-3).
        betas: coefficients of the running averages of the gradient and its square.
        eps: added to the denominator (default 1e-8).
        weight_decay: weight decay (default 0).
        momentum_decay: the schedule's decay (default 4e-3).
        decoupled_weight_decay: decay the parameters directly (NAdamW).
        foreach: accepted for API parity.
        maximize: maximize the objective instead of minimizing it.
        capturable, differentiable: must be False.

    State per parameter: ``step``, ``mu_product`` (a 0-d tensor, as PyTorch keeps it),
    ``exp_avg``, ``exp_avg_sq``.

    Raises:
        ValueError: an out-of-range hyper-parameter (same messages as torch).

    Mirrors: ``torch.optim.NAdam`` (single-tensor path).
    """

    def __init__(self, params: Any, lr: float = 2e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 0, momentum_decay: float = 4e-3,
                 decoupled_weight_decay: bool = False, *, foreach: bool | None = None,
                 maximize: bool = False, capturable: bool = False,
                 differentiable: bool = False) -> None:
        check_adam_like(lr, eps, betas, weight_decay)
        if not 0.0 <= momentum_decay:
            raise ValueError(f"Invalid momentum_decay value: {momentum_decay}")
        _reject_unsupported(differentiable, None, capturable)
        defaults = {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay,
                    "momentum_decay": momentum_decay,
                    "decoupled_weight_decay": decoupled_weight_decay, "maximize": maximize,
                    "foreach": foreach, "capturable": capturable,
                    "differentiable": differentiable}
        super().__init__(params, defaults)

    _GROUP_DEFAULTS = (("maximize", False), ("foreach", None), ("capturable", False),
                       ("differentiable", False), ("decoupled_weight_decay", False))
    _TENSOR_STEPS = True

    def __setstate__(self, state: dict[str, Any]) -> None:
        super().__setstate__(state)
        for group in self.param_groups:
            for p in group["params"]:
                p_state = self.state.get(p, {})
                if p_state and not isinstance(p_state["mu_product"], Tensor):
                    p_state["mu_product"] = _new_step(float(p_state["mu_product"]))

    def _init_state(self, state: dict[str, Any], p: Tensor, group: dict[str, Any]) -> None:
        state["step"] = _new_step()
        state["mu_product"] = _new_step(1.0)
        state["exp_avg"] = _zeros_like(p)
        state["exp_avg_sq"] = _zeros_like(p)

    @_use_grad_for_differentiable
    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Perform a single optimization step.

        Mirrors: ``torch.optim.NAdam.step``.
        """
        loss = _closure_loss(closure) if closure is not None else None
        for group in self.param_groups:
            params, grads, states = self._params_with_state(group)
            beta1, beta2 = group["betas"]
            nadam(params, grads, [s["exp_avg"] for s in states],
                  [s["exp_avg_sq"] for s in states], [s["mu_product"] for s in states],
                  [s["step"] for s in states], beta1=beta1, beta2=beta2, lr=group["lr"],
                  weight_decay=group["weight_decay"], momentum_decay=group["momentum_decay"],
                  eps=group["eps"], decoupled_weight_decay=group["decoupled_weight_decay"],
                  maximize=group["maximize"])
        return loss


def nadam(params: list[Tensor], grads: list[Tensor], exp_avgs: list[Tensor],
          exp_avg_sqs: list[Tensor], mu_products: list[Tensor], state_steps: list[Tensor], *,
          beta1: float, beta2: float, lr: float, weight_decay: float, momentum_decay: float,
          eps: float, decoupled_weight_decay: bool, maximize: bool) -> None:
    """Apply the NAdam update in place.

    Mirrors: ``torch.optim.nadam.nadam`` with ``foreach=False``.
    """
    lr = float(lr)
    for i, param in enumerate(params):
        p = _arr(param)
        xp = _backend.namespace_of(p)
        grad = _arr(grads[i])
        g = -grad if maximize else grad
        state_steps[i]._data += 1
        _bump(state_steps[i])
        step = float(state_steps[i]._data)
        bias_correction2 = 1 - beta2**step
        if weight_decay != 0:
            if decoupled_weight_decay:
                p *= 1 - lr * weight_decay
            else:
                g = g + weight_decay * p
        mu = beta1 * (1.0 - 0.5 * (0.96 ** (step * momentum_decay)))
        mu_next = beta1 * (1.0 - 0.5 * (0.96 ** ((step + 1) * momentum_decay)))
        mu_products[i]._data *= mu  # a 0-d tensor in the scalar dtype, as PyTorch's
        _bump(mu_products[i])
        mu_product = float(mu_products[i]._data)
        exp_avg, exp_avg_sq = _arr(exp_avgs[i]), _arr(exp_avg_sqs[i])
        _lerp_(exp_avg, g, 1 - beta1)
        exp_avg_sq *= beta2
        exp_avg_sq += (1 - beta2) * g * g
        denom = xp.sqrt(exp_avg_sq / bias_correction2)
        denom += eps
        p += (-lr * (1.0 - mu) / (1.0 - mu_product)) * g / denom
        p += ((-lr * mu_next) / (1.0 - mu_product * mu_next)) * exp_avg / denom
        _bump(exp_avgs[i])
        _bump(exp_avg_sqs[i])
        _bump(param)
