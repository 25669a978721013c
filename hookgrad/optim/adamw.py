"""AdamW: Adam with decoupled weight decay. Mirrors ``torch.optim.AdamW``."""

from __future__ import annotations

from typing import Any

from hookgrad.optim.adam import Adam

__all__ = ["AdamW"]


class AdamW(Adam):
    """Adam with decoupled weight decay (the decay does not enter the moment estimates).

    Args:
        params: tensors or parameter groups to optimize.
        lr: learning rate (default 1e-3).
        betas: coefficients of the running averages of the gradient and its square.
        eps: term added to the denominator for numerical stability (default 1e-8).
        weight_decay: decoupled weight decay coefficient (default 1e-2).
        amsgrad: use the AMSGrad variant.
        maximize: maximize the objective instead of minimizing it.
        foreach: take the multi-tensor path (`hookgrad.optim._multi_tensor`).
        capturable: must be False.
        differentiable: must be False.
        fused: the fused update (CPU tensors supported, as in PyTorch; not with
            ``foreach`` or ``differentiable``).

    Example:
        >>> import hookgrad
        >>> w = hookgrad.ones(1, requires_grad=True)
        >>> w.grad = hookgrad.zeros(1)
        >>> hookgrad.optim.AdamW([w], lr=0.1, weight_decay=0.5).step()
        >>> [round(v, 4) for v in w.tolist()]
        [0.95]

    Mirrors: ``torch.optim.AdamW`` (an `Adam` with ``decoupled_weight_decay=True``).
    """

    def __init__(
        self,
        params: Any,
        lr: float = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 1e-2,
        amsgrad: bool = False,
        *,
        maximize: bool = False,
        foreach: bool | None = None,
        capturable: bool = False,
        differentiable: bool = False,
        fused: bool | None = None,
    ) -> None:
        super().__init__(
            params, lr, betas, eps, weight_decay, amsgrad, foreach=foreach, maximize=maximize,
            capturable=capturable, differentiable=differentiable, fused=fused,
            decoupled_weight_decay=True,
        )

    def __setstate__(self, state: dict[str, Any]) -> None:
        super().__setstate__(state)
        for group in self.param_groups:
            group["decoupled_weight_decay"] = True
