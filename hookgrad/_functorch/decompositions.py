"""Primitives that vmap runs as compositions of other primitives when a gradient is needed.

A few VJP rules read raw values (nll_loss builds its gradient mask from the integer target);
under ``vmap(grad(f))`` such a rule would run once per sample (NOTE [vmap and rules]). When a
logical input requires grad, vmap instead runs these primitives as compositions whose every
rule batches, so the backward pass is one batched pass. Values match; the nodes of the graph
are the composition's (``GatherBackward0``...) instead of ``NllLossBackward0``, a departure
visible only to code that walks ``grad_fn`` inside vmap.
"""

from __future__ import annotations

from typing import Any

__all__ = ["DECOMPOSITIONS"]


def _nll_loss(x: Any, target: Any, weight: Any = None, reduction: int = 1,
              ignore_index: int = -100) -> Any:
    if x.dim() not in (1, 2):
        return None
    axis = 0 if x.dim() == 1 else 1
    valid = target != ignore_index
    safe = target * valid  # ignored targets pick class 0, weighted 0
    picked = x.gather(axis, safe.unsqueeze(axis)).squeeze(axis)
    if weight is not None and not getattr(weight, "_absent", False):
        wt = weight.index_select(0, safe.reshape(-1)).reshape(tuple(safe.shape)) * valid
    else:
        wt = valid.to(x.dtype)
    loss = -picked * wt
    if reduction == 0:
        return loss
    if reduction == 2:
        return loss.sum()
    total = wt.sum()
    # every target ignored: PyTorch's value is 0/0 (nan) but its backward writes no gradient,
    # so the division runs by 1 there and the nan is added without a gradient
    safe = total + (total == 0).to(total.dtype)
    return loss.sum() / safe + (total / total - 1.0).detach()


DECOMPOSITIONS = {"nll_loss": _nll_loss}
