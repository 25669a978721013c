"""ASGD (averaged stochastic gradient descent). Mirrors ``torch.optim.ASGD``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from hookgrad._tensor import Tensor
from hookgrad.optim.optimizer import (
    Optimizer,
    _arr,
    _bump,
    _check_lr,
    _closure_loss,
    _get_scalar_dtype,
    _new_step,
    _reject_unsupported,
    _use_grad_for_differentiable,
    _zeros_like,
)

__all__ = ["ASGD", "asgd"]


class ASGD(Optimizer):
    """ASGD: SGD with a decaying step ``eta`` and a running average ``ax`` of the iterates.

    Args:
        params: tensors or parameter groups to optimize.
        lr: learning rate (default 1e-2).
        lambd: decay term (default 1e-4).
        alpha: power for the eta update (default 0.75).
        t0: step at which averaging starts (default 1e6).
        weight_decay: L2 penalty (default 0).
        foreach: accepted for API parity.
        maximize: maximize the objective instead of minimizing it.
        differentiable, capturable: must be False.

    Raises:
        ValueError: an out-of-range hyper-parameter (same messages as torch).

    Mirrors: ``torch.optim.ASGD`` (single-tensor path; ``eta``/``mu`` are 0-d state tensors).
    """

    def __init__(self, params: Any, lr: float = 1e-2, lambd: float = 1e-4, alpha: float = 0.75,
                 t0: float = 1e6, weight_decay: float = 0, foreach: bool | None = None,
                 maximize: bool = False, differentiable: bool = False,
                 capturable: bool = False) -> None:
        _check_lr(lr)
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        _reject_unsupported(differentiable, None, capturable)
        defaults = {"lr": lr, "lambd": lambd, "alpha": alpha, "t0": t0,
                    "weight_decay": weight_decay, "foreach": foreach, "maximize": maximize,
                    "differentiable": differentiable, "capturable": capturable}
        super().__init__(params, defaults)

    _GROUP_DEFAULTS = (("foreach", None), ("maximize", False), ("differentiable", False),
                       ("capturable", False))
    _TENSOR_STEPS = True

    def _init_state(self, state: dict[str, Any], p: Tensor, group: dict[str, Any]) -> None:
        state["step"] = _new_step()
        state["eta"] = _new_step(float(group["lr"]))
        state["mu"] = _new_step(1.0)
        state["ax"] = _zeros_like(p)

    @_use_grad_for_differentiable
    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Perform a single optimization step.

        Mirrors: ``torch.optim.ASGD.step``.
        """
        loss = _closure_loss(closure) if closure is not None else None
        for group in self.param_groups:
            params, grads, states = self._params_with_state(group)
            asgd(params, grads, [s["ax"] for s in states], [s["mu"] for s in states],
                 [s["eta"] for s in states], [s["step"] for s in states],
                 lambd=group["lambd"], lr=group["lr"], t0=group["t0"], alpha=group["alpha"],
                 weight_decay=group["weight_decay"], maximize=group["maximize"])
        return loss


def asgd(params: list[Tensor], grads: list[Tensor], axs: list[Tensor], mus: list[Tensor],
         etas: list[Tensor], state_steps: list[Tensor], *, lambd: float, lr: float, t0: float,
         alpha: float, weight_decay: float, maximize: bool) -> None:
    """Apply the ASGD update in place.

    Mirrors: ``torch.optim.asgd.asgd`` with ``foreach=False``.
    """
    lr = float(lr)
    scalar = _get_scalar_dtype()
    for i, param in enumerate(params):
        p, ax = _arr(param), _arr(axs[i])
        g = _arr(grads[i])
        g = -g if maximize else g
        state_steps[i]._data += 1
        if weight_decay != 0:
            g = g + p.dtype.type(weight_decay) * p
        eta = float(etas[i]._data)
        p *= 1 - lambd * eta
        p += p.dtype.type(-eta) * g
        mu = float(mus[i]._data)
        if mu != 1:
            ax += (p - ax) * p.dtype.type(mu)
        else:
            ax[...] = p
        step = float(state_steps[i]._data)
        etas[i]._data[...] = np.asarray(lr / ((1 + lambd * lr * step) ** alpha), dtype=scalar)
        mus[i]._data[...] = np.asarray(1 / max(1, step - t0), dtype=scalar)
        for t in (state_steps[i], etas[i], mus[i], axs[i], param):
            _bump(t)
