"""Stochastic gradient descent with optional momentum. Mirrors ``torch.optim.SGD``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from hookgrad._tensor import Tensor
from hookgrad.optim._multi_tensor import check_fused
from hookgrad.optim.optimizer import (
    Optimizer,
    _arr,
    _as_param_array,
    _bump,
    _closure_loss,
    _params_with_grad,
    _reject_unsupported,
    _use_grad_for_differentiable,
)

__all__ = ["SGD", "sgd"]


class SGD(Optimizer):
    """Stochastic gradient descent, with optional momentum, dampening, Nesterov momentum,
    weight decay (L2 penalty) and maximisation.

    Args:
        params: tensors or parameter groups to optimize.
        lr: learning rate (default 1e-3).
        momentum: momentum factor (default 0).
        dampening: dampening for momentum (default 0).
        weight_decay: L2 penalty (default 0).
        nesterov: use Nesterov momentum (default False).
        maximize: maximize the objective instead of minimizing it.
        foreach: accepted for API parity; hookgrad always runs the for-loop path.
        differentiable: must be False.
        fused: the fused update (CPU tensors supported, as in PyTorch; not with
            ``foreach`` or ``differentiable``); the same arithmetic per element here.

    Raises:
        ValueError: a negative lr/momentum/weight_decay, or Nesterov without momentum or with
            dampening.

    Example:
        >>> import hookgrad
        >>> w = hookgrad.ones(2, requires_grad=True)
        >>> opt = hookgrad.optim.SGD([w], lr=0.5)
        >>> w.grad = hookgrad.ones(2)
        >>> opt.step()
        >>> w.tolist()
        [0.5, 0.5]

    Mirrors: ``torch.optim.SGD`` (single-tensor path; see NOTE [In-place optimizer math]).
    """

    def __init__(
        self,
        params: Any,
        lr: float = 1e-3,
        momentum: float = 0,
        dampening: float = 0,
        weight_decay: float = 0,
        nesterov: bool = False,
        *,
        maximize: bool = False,
        foreach: bool | None = None,
        differentiable: bool = False,
        fused: bool | None = None,
    ) -> None:
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = {
            "lr": lr, "momentum": momentum, "dampening": dampening,
            "weight_decay": weight_decay, "nesterov": nesterov, "maximize": maximize,
            "foreach": foreach, "differentiable": differentiable, "fused": fused,
        }
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        _reject_unsupported(differentiable and not fused, None)
        super().__init__(params, defaults)
        check_fused(fused, foreach, differentiable)

    _GROUP_DEFAULTS = (("nesterov", False), ("maximize", False), ("foreach", None),
                       ("differentiable", False), ("fused", False))

    @_use_grad_for_differentiable
    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Perform a single optimization step.

        Args:
            closure: re-evaluates the model and returns the loss (run with grad enabled).

        Returns:
            The closure's loss, or ``None``.

        Mirrors: ``torch.optim.SGD.step``.
        """
        loss = _closure_loss(closure) if closure is not None else None
        for group in self.param_groups:
            params, grads = _params_with_grad(group)
            has_momentum = group["momentum"] != 0
            momentum_buffer_list: list[Tensor | None] = (
                [self.state[p].get("momentum_buffer") for p in params] if has_momentum else []
            )
            sgd(params, grads, momentum_buffer_list, weight_decay=group["weight_decay"],
                momentum=group["momentum"], lr=group["lr"], dampening=group["dampening"],
                nesterov=group["nesterov"], maximize=group["maximize"])
            if has_momentum:
                for p, momentum_buffer in zip(params, momentum_buffer_list, strict=True):
                    self.state[p]["momentum_buffer"] = momentum_buffer
        return loss


def sgd(
    params: list[Tensor],
    grads: list[Tensor],
    momentum_buffer_list: list[Tensor | None],
    *,
    weight_decay: float,
    momentum: float,
    lr: float,
    dampening: float,
    nesterov: bool,
    maximize: bool,
) -> None:
    """Apply the SGD update to each parameter in place (new momentum buffers are stored back
    into `momentum_buffer_list`).

    Mirrors: ``torch.optim.sgd.sgd`` with ``foreach=False`` (torch's ``_single_tensor_sgd``).
    """
    lr, weight_decay = float(lr), float(weight_decay)
    for i, param in enumerate(params):
        p = _arr(param)
        grad = _arr(grads[i])
        g = -grad if maximize else grad
        if weight_decay != 0:
            g = g + weight_decay * p  # grad.add(param, alpha=weight_decay)
        if momentum != 0:
            buf_t = momentum_buffer_list[i]
            if buf_t is None:  # buf = grad.detach().clone(), in the parameter's shape
                buf = g.copy() if g is grad else g
                buf_t = Tensor._make(_as_param_array(buf, param))
                momentum_buffer_list[i] = buf_t
            else:
                buf = _arr(buf_t)
                buf *= momentum
                buf += g if dampening == 0 else (1 - dampening) * g
                _bump(buf_t)
            g = g + momentum * buf if nesterov else buf
        p += -lr * g
        _bump(param)
