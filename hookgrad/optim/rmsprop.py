"""RMSprop. Mirrors ``torch.optim.RMSprop``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from hookgrad import _backend
from hookgrad._tensor import Tensor
from hookgrad.optim.adam import _lerp_
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

__all__ = ["RMSprop", "rmsprop"]


class RMSprop(Optimizer):
    """RMSprop, with optional momentum, centering, weight decay and maximisation.

    Args:
        params: tensors or parameter groups to optimize.
        lr: learning rate (default 1e-2).
        alpha: smoothing constant of the squared-gradient average (default 0.99).
        eps: term added to the denominator for numerical stability (default 1e-8).
        weight_decay: L2 penalty (default 0).
        momentum: momentum factor (default 0).
        centered: normalise by an estimate of the gradient's variance.
        capturable: must be False.
        foreach: accepted for API parity; hookgrad always runs the for-loop path.
        maximize: maximize the objective instead of minimizing it.
        differentiable: must be False.

    Example:
        >>> import hookgrad
        >>> w = hookgrad.zeros(1, requires_grad=True)
        >>> w.grad = hookgrad.ones(1)
        >>> hookgrad.optim.RMSprop([w], lr=0.01, alpha=0.0).step()
        >>> [round(v, 4) for v in w.tolist()]
        [-0.01]

    Mirrors: ``torch.optim.RMSprop`` (single-tensor path; see NOTE [In-place optimizer math]).
    """

    def __init__(
        self,
        params: Any,
        lr: float = 1e-2,
        alpha: float = 0.99,
        eps: float = 1e-8,
        weight_decay: float = 0,
        momentum: float = 0,
        centered: bool = False,
        capturable: bool = False,
        foreach: bool | None = None,
        maximize: bool = False,
        differentiable: bool = False,
    ) -> None:
        _check_lr(lr)
        if not eps >= 0.0:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not momentum >= 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if not weight_decay >= 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if not alpha >= 0.0:
            raise ValueError(f"Invalid alpha value: {alpha}")
        _reject_unsupported(differentiable, None, capturable)
        defaults = {
            "lr": lr, "momentum": momentum, "alpha": alpha, "eps": eps, "centered": centered,
            "weight_decay": weight_decay, "capturable": capturable, "foreach": foreach,
            "maximize": maximize, "differentiable": differentiable,
        }
        super().__init__(params, defaults)

    _GROUP_DEFAULTS = (("momentum", 0), ("centered", False), ("foreach", None),
                       ("maximize", False), ("differentiable", False), ("capturable", False))
    _TENSOR_STEPS = True

    def _init_state(self, state: dict[str, Any], p: Tensor, group: dict[str, Any]) -> None:
        state["step"] = _new_step()
        state["square_avg"] = _zeros_like(p)
        if group["momentum"] > 0:
            state["momentum_buffer"] = _zeros_like(p)
        if group["centered"]:
            state["grad_avg"] = _zeros_like(p)

    @_use_grad_for_differentiable
    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Perform a single optimization step.

        Args:
            closure: re-evaluates the model and returns the loss (run with grad enabled).

        Returns:
            The closure's loss, or ``None``.

        Mirrors: ``torch.optim.RMSprop.step``.
        """
        loss = _closure_loss(closure) if closure is not None else None
        for group in self.param_groups:
            params, grads, states = self._params_with_state(group)
            rmsprop(
                params,
                grads,
                [s["square_avg"] for s in states],
                [s["grad_avg"] for s in states] if group["centered"] else [],
                [s["momentum_buffer"] for s in states] if group["momentum"] > 0 else [],
                [s["step"] for s in states],
                lr=group["lr"], alpha=group["alpha"], eps=group["eps"],
                weight_decay=group["weight_decay"], momentum=group["momentum"],
                centered=group["centered"], maximize=group["maximize"],
            )
        return loss


def rmsprop(
    params: list[Tensor],
    grads: list[Tensor],
    square_avgs: list[Tensor],
    grad_avgs: list[Tensor],
    momentum_buffer_list: list[Tensor],
    state_steps: list[Tensor],
    *,
    lr: float,
    alpha: float,
    eps: float,
    weight_decay: float,
    momentum: float,
    centered: bool,
    maximize: bool,
) -> None:
    """Apply the RMSprop update to each parameter and its state in place.

    Mirrors: ``torch.optim.rmsprop.rmsprop`` with ``foreach=False``.
    """
    lr, weight_decay = float(lr), float(weight_decay)
    for i, param in enumerate(params):
        p = _arr(param)
        xp = _backend.namespace_of(p)
        grad = _arr(grads[i])
        g = -grad if maximize else grad
        step_t = state_steps[i]
        step_t._data += 1
        _bump(step_t)
        if weight_decay != 0:
            g = g + weight_decay * p
        square_avg = _arr(square_avgs[i])
        square_avg *= alpha
        tmp = g * (1 - alpha)  # addcmul_(grad, grad, value=1 - alpha)
        tmp *= g
        square_avg += tmp
        _bump(square_avgs[i])
        if centered:
            grad_avg = _arr(grad_avgs[i])
            _lerp_(grad_avg, g, 1 - alpha)
            _bump(grad_avgs[i])
            np.multiply(grad_avg, -1.0, out=tmp)  # square_avg.addcmul(grad_avg, grad_avg, -1)
            tmp *= grad_avg
            avg = square_avg + tmp
            np.sqrt(avg, out=avg)
        else:
            avg = xp.sqrt(square_avg)
        avg += eps
        if momentum > 0:
            buf = _arr(momentum_buffer_list[i])
            buf *= momentum
            buf += g / avg  # addcdiv_(grad, avg): value 1 * grad / avg
            _bump(momentum_buffer_list[i])
            p += -lr * buf
        else:
            np.multiply(g, -lr, out=tmp)  # addcdiv_(grad, avg, value=-lr)
            tmp /= avg
            p += tmp
        _bump(param)
