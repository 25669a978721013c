"""Adadelta. Mirrors ``torch.optim.Adadelta``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from hookgrad import _backend
from hookgrad._tensor import Tensor
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

__all__ = ["Adadelta", "adadelta"]


class Adadelta(Optimizer):
    """Adadelta: steps scaled by the ratio of running RMS of updates and of gradients.

    Args:
        params: tensors or parameter groups to optimize.
        lr: scale applied to the delta (default 1.0).
        rho: running-average coefficient (default 0.9).
        eps: added inside both square roots (default 1e-6).
        weight_decay: L2 penalty (default 0).
        foreach: accepted for API parity; hookgrad always runs the for-loop path.
        capturable, differentiable: must be False.
        maximize: maximize the objective instead of minimizing it.

    Raises:
        ValueError: an out-of-range hyper-parameter (same messages as torch).

    Example:
        >>> import hookgrad
        >>> w = hookgrad.zeros(2, requires_grad=True)
        >>> opt = hookgrad.optim.Adadelta([w])
        >>> w.grad = hookgrad.ones(2)
        >>> opt.step()
        >>> [round(v, 5) for v in w.tolist()]
        [-0.00316, -0.00316]

    Mirrors: ``torch.optim.Adadelta`` (single-tensor path).
    """

    def __init__(self, params: Any, lr: float = 1.0, rho: float = 0.9, eps: float = 1e-6,
                 weight_decay: float = 0, foreach: bool | None = None, *,
                 capturable: bool = False, maximize: bool = False,
                 differentiable: bool = False) -> None:
        _check_lr(lr)
        if not 0.0 <= rho <= 1.0:
            raise ValueError(f"Invalid rho value: {rho}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        _reject_unsupported(differentiable, None, capturable)
        defaults = {"lr": lr, "rho": rho, "eps": eps, "weight_decay": weight_decay,
                    "maximize": maximize, "capturable": capturable, "foreach": foreach,
                    "differentiable": differentiable}
        super().__init__(params, defaults)

    _GROUP_DEFAULTS = (("foreach", None), ("maximize", False), ("differentiable", False),
                       ("capturable", False))
    _TENSOR_STEPS = True

    def _init_state(self, state: dict[str, Any], p: Tensor, group: dict[str, Any]) -> None:
        state["step"] = _new_step()
        state["square_avg"] = _zeros_like(p)
        state["acc_delta"] = _zeros_like(p)

    @_use_grad_for_differentiable
    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Perform a single optimization step.

        Mirrors: ``torch.optim.Adadelta.step``.
        """
        loss = _closure_loss(closure) if closure is not None else None
        for group in self.param_groups:
            params, grads, states = self._params_with_state(group)
            adadelta(params, grads, [s["square_avg"] for s in states],
                     [s["acc_delta"] for s in states], [s["step"] for s in states],
                     lr=group["lr"], rho=group["rho"], eps=group["eps"],
                     weight_decay=group["weight_decay"], maximize=group["maximize"])
        return loss


def adadelta(params: list[Tensor], grads: list[Tensor], square_avgs: list[Tensor],
             acc_deltas: list[Tensor], state_steps: list[Tensor], *, lr: float, rho: float,
             eps: float, weight_decay: float, maximize: bool) -> None:
    """Apply the Adadelta update in place.

    Mirrors: ``torch.optim.adadelta.adadelta`` with ``foreach=False``.
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
        square_avg, acc_delta = _arr(square_avgs[i]), _arr(acc_deltas[i])
        # The same operations in the same order as PyTorch's, into three temporaries instead
        # of eight (these are parameter-sized: 4.7 MB for the MNIST example's first Linear)
        square_avg *= rho
        tmp = xp.multiply(g, 1 - rho)  # addcmul_: value * t1 * t2, left to right
        xp.multiply(tmp, g, out=tmp)
        square_avg += tmp
        std = xp.add(square_avg, eps)
        xp.sqrt(std, out=std)
        delta = xp.add(acc_delta, eps)
        xp.sqrt(delta, out=delta)
        delta /= std
        delta *= g
        acc_delta *= rho
        xp.multiply(delta, 1 - rho, out=tmp)
        xp.multiply(tmp, delta, out=tmp)
        acc_delta += tmp
        xp.multiply(delta, -lr, out=tmp)
        p += tmp
        _bump(square_avgs[i])
        _bump(acc_deltas[i])
        _bump(param)
