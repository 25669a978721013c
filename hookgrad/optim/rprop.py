"""Rprop (resilient backpropagation). Mirrors ``torch.optim.Rprop``."""

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

__all__ = ["Rprop", "rprop"]


class Rprop(Optimizer):
    """Rprop: a per-element step size grown while the gradient keeps its sign, shrunk on a flip.

    Args:
        params: tensors or parameter groups to optimize.
        lr: initial step size (default 1e-2).
        etas: (decrease, increase) factors, ``0 < etaminus < 1 < etaplus``.
        step_sizes: (minimum, maximum) step size.
        capturable, differentiable: must be False.
        foreach: accepted for API parity.
        maximize: maximize the objective instead of minimizing it.

    Raises:
        ValueError: an out-of-range hyper-parameter (same messages as torch).

    Mirrors: ``torch.optim.Rprop`` (single-tensor path).
    """

    def __init__(self, params: Any, lr: float = 1e-2, etas: tuple[float, float] = (0.5, 1.2),
                 step_sizes: tuple[float, float] = (1e-6, 50), *, capturable: bool = False,
                 foreach: bool | None = None, maximize: bool = False,
                 differentiable: bool = False) -> None:
        _check_lr(lr)
        if not 0.0 < etas[0] < 1.0 < etas[1]:
            raise ValueError(f"Invalid eta values: {etas[0]}, {etas[1]}")
        _reject_unsupported(differentiable, None, capturable)
        defaults = {"lr": lr, "etas": etas, "step_sizes": step_sizes, "foreach": foreach,
                    "maximize": maximize, "differentiable": differentiable,
                    "capturable": capturable}
        super().__init__(params, defaults)

    _GROUP_DEFAULTS = (("foreach", None), ("maximize", False), ("differentiable", False),
                       ("capturable", False))
    _TENSOR_STEPS = True

    def _init_state(self, state: dict[str, Any], p: Tensor, group: dict[str, Any]) -> None:
        state["step"] = _new_step()
        state["prev"] = _zeros_like(p)
        size = _zeros_like(p)
        size._data[...] = float(group["lr"])
        state["step_size"] = size

    @_use_grad_for_differentiable
    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Perform a single optimization step.

        Mirrors: ``torch.optim.Rprop.step``.
        """
        loss = _closure_loss(closure) if closure is not None else None
        for group in self.param_groups:
            params, grads, states = self._params_with_state(group)
            etaminus, etaplus = group["etas"]
            size_min, size_max = group["step_sizes"]
            rprop(params, grads, [s["prev"] for s in states], [s["step_size"] for s in states],
                  [s["step"] for s in states], step_size_min=size_min, step_size_max=size_max,
                  etaminus=etaminus, etaplus=etaplus, maximize=group["maximize"])
        return loss


def rprop(params: list[Tensor], grads: list[Tensor], prevs: list[Tensor],
          step_sizes: list[Tensor], state_steps: list[Tensor], *, step_size_min: float,
          step_size_max: float, etaminus: float, etaplus: float, maximize: bool) -> None:
    """Apply the Rprop update in place.

    Mirrors: ``torch.optim.rprop.rprop`` with ``foreach=False``.
    """
    for i, param in enumerate(params):
        p = _arr(param)
        xp = _backend.namespace_of(p)
        g = _arr(grads[i])
        g = -g if maximize else g
        prev, size = _arr(prevs[i]), _arr(step_sizes[i])
        state_steps[i]._data += 1
        _bump(state_steps[i])
        sign = xp.sign(g * prev)
        factor = xp.where(sign > 0, etaplus, xp.where(sign < 0, etaminus, 1)).astype(g.dtype)
        size *= factor
        xp.clip(size, step_size_min, step_size_max, out=size)
        g = xp.where(factor == factor.dtype.type(etaminus), 0, g).astype(g.dtype)
        p -= xp.sign(g) * size
        prev[...] = g
        for t in (prevs[i], step_sizes[i], param):
            _bump(t)
