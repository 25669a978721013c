"""Adam (and the shared Adam/AdamW update). Mirrors ``torch.optim.Adam``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from hookgrad import _backend
from hookgrad._tensor import Tensor
from hookgrad.optim._multi_tensor import advance_steps, check_fused, per_step
from hookgrad.optim.optimizer import (
    Optimizer,
    _arr,
    _bump,
    _check_lr,
    _closure_loss,
    _new_step,
    _reject_unsupported,
    _use_grad_for_differentiable,
    _zeros_like,
)

__all__ = ["Adam", "adam"]


class Adam(Optimizer):
    """Adam, with optional L2 weight decay (or decoupled decay), AMSGrad and maximisation.

    Args:
        params: tensors or parameter groups to optimize.
        lr: learning rate (default 1e-3).
        betas: coefficients of the running averages of the gradient and its square.
        eps: term added to the denominator for numerical stability (default 1e-8).
        weight_decay: weight decay (default 0).
        amsgrad: use the AMSGrad variant.
        foreach: take the multi-tensor path (`hookgrad.optim._multi_tensor`).
        maximize: maximize the objective instead of minimizing it.
        capturable: must be False.
        differentiable: must be False.
        fused: the fused update (CPU tensors supported, as in PyTorch; not with
            ``foreach`` or ``differentiable``).
        decoupled_weight_decay: apply weight decay to the parameters directly (AdamW).

    Raises:
        ValueError: an out-of-range hyper-parameter (same messages as torch).

    Example:
        >>> import hookgrad
        >>> w = hookgrad.zeros(2, requires_grad=True)
        >>> opt = hookgrad.optim.Adam([w], lr=0.1)
        >>> w.grad = hookgrad.ones(2)
        >>> opt.step()
        >>> [round(v, 4) for v in w.tolist()]
        [-0.1, -0.1]

    Mirrors: ``torch.optim.Adam`` (single-tensor path; see NOTE [In-place optimizer math]).
    """

    def __init__(
        self,
        params: Any,
        lr: float = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0,
        amsgrad: bool = False,
        *,
        foreach: bool | None = None,
        maximize: bool = False,
        capturable: bool = False,
        differentiable: bool = False,
        fused: bool | None = None,
        decoupled_weight_decay: bool = False,
    ) -> None:
        _check_lr(lr)
        if not eps >= 0.0:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= betas[0] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
        if not 0.0 <= betas[1] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
        if not weight_decay >= 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if not (isinstance(betas[0], float) and isinstance(betas[1], float)):
            raise ValueError("betas must be either both floats or both Tensors")
        _reject_unsupported(differentiable and not fused, None, capturable)
        defaults = {
            "lr": lr, "betas": tuple(betas), "eps": eps, "weight_decay": weight_decay,
            "amsgrad": amsgrad, "maximize": maximize, "foreach": foreach,
            "capturable": capturable, "differentiable": differentiable, "fused": fused,
            "decoupled_weight_decay": decoupled_weight_decay,
        }
        super().__init__(params, defaults)
        check_fused(fused, foreach, differentiable)

    _GROUP_DEFAULTS = (("amsgrad", False), ("maximize", False), ("foreach", None),
                       ("capturable", False), ("differentiable", False),
                       ("decoupled_weight_decay", False), ("fused", None))
    _TENSOR_STEPS = True

    def _init_state(self, state: dict[str, Any], p: Tensor, group: dict[str, Any]) -> None:
        state["step"] = _new_step()
        state["exp_avg"] = _zeros_like(p)
        state["exp_avg_sq"] = _zeros_like(p)
        if group["amsgrad"]:
            state["max_exp_avg_sq"] = _zeros_like(p)

    @_use_grad_for_differentiable
    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Perform a single optimization step.

        Args:
            closure: re-evaluates the model and returns the loss (run with grad enabled).

        Returns:
            The closure's loss, or ``None``.

        Mirrors: ``torch.optim.Adam.step``.
        """
        loss = _closure_loss(closure) if closure is not None else None
        for group in self.param_groups:
            params, grads, states = self._params_with_state(group)
            beta1, beta2 = group["betas"]
            adam(
                params,
                grads,
                [s["exp_avg"] for s in states],
                [s["exp_avg_sq"] for s in states],
                [s["max_exp_avg_sq"] for s in states] if group["amsgrad"] else [],
                [s["step"] for s in states],
                amsgrad=group["amsgrad"], beta1=beta1, beta2=beta2, lr=group["lr"],
                weight_decay=group["weight_decay"], eps=group["eps"],
                maximize=group["maximize"],
                decoupled_weight_decay=group["decoupled_weight_decay"],
                foreach=group["foreach"], fused=group["fused"],
            )
        return loss


def adam(
    params: list[Tensor],
    grads: list[Tensor],
    exp_avgs: list[Tensor],
    exp_avg_sqs: list[Tensor],
    max_exp_avg_sqs: list[Tensor],
    state_steps: list[Tensor],
    *,
    amsgrad: bool,
    beta1: float,
    beta2: float,
    lr: float,
    weight_decay: float,
    eps: float,
    maximize: bool,
    decoupled_weight_decay: bool = False,
    foreach: bool | None = None,
    fused: bool | None = None,
) -> None:
    """Apply the Adam/AdamW update to each parameter and its state in place.

    ``foreach``/``fused`` take the multi-tensor path (`hookgrad.optim._multi_tensor`): every
    step counter is advanced first and the bias corrections are computed once per step value.

    Mirrors: ``torch.optim.adam.adam`` (``_single_tensor_adam``, ``_multi_tensor_adam`` and
    ``_fused_adam``).
    """
    lr, weight_decay = float(lr), float(weight_decay)
    scalars = (per_step(advance_steps(state_steps), lambda s: _bias_scalars(lr, beta1, beta2, s))
               if foreach or fused else None)
    for i, param in enumerate(params):
        p = _arr(param)
        xp = _backend.namespace_of(p)
        grad = _arr(grads[i])
        g = -grad if maximize else grad
        step_size, bias_correction2_sqrt = (
            scalars[i] if scalars is not None
            else _bias_scalars(lr, beta1, beta2, advance_steps(state_steps[i:i + 1])[0]))
        if weight_decay != 0:
            if decoupled_weight_decay:
                p *= 1 - lr * weight_decay
            else:
                g = g + weight_decay * p  # grad.add(param, alpha=weight_decay)
        exp_avg, exp_avg_sq = _arr(exp_avgs[i]), _arr(exp_avg_sqs[i])
        _lerp_(exp_avg, g, 1 - beta1)
        exp_avg_sq *= beta2
        tmp = g * (1 - beta2)  # addcmul_(grad, grad, value=1 - beta2): value * g * g
        tmp *= g
        exp_avg_sq += tmp
        if amsgrad:
            max_sq = _arr(max_exp_avg_sqs[i])
            np.maximum(max_sq, exp_avg_sq, out=max_sq)
            _bump(max_exp_avg_sqs[i])
            denom = xp.sqrt(max_sq)
        else:
            denom = xp.sqrt(exp_avg_sq)
        denom /= bias_correction2_sqrt
        denom += eps
        np.multiply(exp_avg, -step_size, out=tmp)  # addcdiv_: p + value * exp_avg / denom
        tmp /= denom
        p += tmp
        _bump(exp_avgs[i])
        _bump(exp_avg_sqs[i])
        _bump(param)


def _bias_scalars(lr: float, beta1: float, beta2: float, step: float) -> tuple[float, float]:
    """(``lr / (1 - beta1**step)``, ``sqrt(1 - beta2**step)``): the step's bias corrections."""
    return lr / (1 - beta1**step), (1 - beta2**step) ** 0.5


def _lerp_(start: Any, end: Any, weight: float) -> None:
    """``start.lerp_(end, weight)`` with ATen's two-branch formula, in `start`'s dtype."""
    w = start.dtype.type(weight)
    diff = end - start
    if abs(w) < 0.5:
        diff *= w
        start += diff
    else:
        diff *= start.dtype.type(1) - w
        np.subtract(end, diff, out=start)
