"""``clip_grads_with_norm_`` and the deprecated ``clip_grad_norm``.

Mirrors: ``torch.nn.utils.clip_grads_with_norm_`` (scale every gradient by
``min(1, max_norm / (total_norm + 1e-6))``) and ``torch.nn.utils.clip_grad_norm``.
"""

from __future__ import annotations

import warnings
from typing import Any

from hookgrad._tensor import Tensor
from hookgrad.autograd.grad_mode import no_grad
from hookgrad.nn.utils.clip_grad import clip_grad_norm_

__all__ = ["clip_grads_with_norm_", "clip_grad_norm"]


def clip_grads_with_norm_(parameters: Any, max_norm: float, total_norm: Tensor,
                          foreach: bool | None = None) -> None:
    """Scale gradients given their precomputed total norm. Mirrors: ``torch.nn.utils.clip_grads_with_norm_``."""
    params = [parameters] if isinstance(parameters, Tensor) else list(parameters)
    grads = [p.grad for p in params if p.grad is not None]
    if not grads:
        return
    coef = (max_norm / (total_norm + 1e-6)).clamp(max=1.0)
    with no_grad():
        for g in grads:
            g.mul_(coef.to(g.dtype))


def clip_grad_norm(parameters: Any, max_norm: float, norm_type: float = 2.0,
                   error_if_nonfinite: bool = False, foreach: bool | None = None) -> Tensor:
    """Deprecated spelling of ``clip_grad_norm_``. Mirrors: ``torch.nn.utils.clip_grad_norm``."""
    warnings.warn("`torch.nn.utils.clip_grad_norm` is now deprecated in favor of "
                  "`torch.nn.utils.clip_grad_norm_`.", FutureWarning, stacklevel=2)
    return clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite, foreach)
