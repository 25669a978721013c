"""Private ``torch`` names that PyTorch's own Python sources call (``nn/utils`` among them).

Mirrors: ``torch._weight_norm``, ``torch.norm_except_dim``, ``torch._foreach_norm``,
``torch._foreach_mul_``, ``torch._foreach_clamp_max_``, ``torch._foreach_clamp_min_``. With
them, PyTorch's ``nn/utils`` files (weight norm, gradient clipping) run unmodified under the
alias. The ``_foreach_*`` functions loop over the list (NumPy has no fused multi-tensor kernels).
"""

from __future__ import annotations

from typing import Any

from hookgrad._functional import linalg as _L
from hookgrad._tensor import Tensor
from hookgrad.autograd.grad_mode import no_grad

__all__ = ["_weight_norm", "norm_except_dim", "_foreach_norm", "_foreach_mul_",
           "_foreach_clamp_max_", "_foreach_clamp_min_"]


def norm_except_dim(v: Tensor, pow: float = 2, dim: int = 0) -> Tensor:
    """Norm over every dim but `dim`, kept as size-1 dims (whole-tensor norm for dim=-1).

    Mirrors: ``torch.norm_except_dim``.
    """
    if dim == -1:
        return _L.vector_norm(v, pow)
    dim %= v.dim()
    others = [d for d in range(v.dim()) if d != dim]
    return _L.vector_norm(v, pow, others, True)


def _weight_norm(v: Tensor, g: Tensor, dim: int = 0) -> Tensor:
    """v * g / ||v|| (norm over every dim but `dim`). Mirrors: ``torch._weight_norm``."""
    return v * (g / norm_except_dim(v, 2, dim))


def _foreach_norm(tensors: Any, ord: float = 2, dtype: Any = None) -> tuple:
    """One vector norm per tensor. Mirrors: ``torch._foreach_norm``."""
    return tuple(_L.vector_norm(t, ord, dtype=dtype) for t in tensors)


def _foreach_mul_(tensors: Any, scalars: Any) -> None:
    """In-place multiply each tensor (by one scalar/tensor or one per tensor).

    Mirrors: ``torch._foreach_mul_``.
    """
    per = scalars if isinstance(scalars, (list, tuple)) else [scalars] * len(tensors)
    with no_grad():
        for t, s in zip(tensors, per):
            t.mul_(s)


def _foreach_clamp_max_(tensors: Any, scalars: Any) -> None:
    """Mirrors: ``torch._foreach_clamp_max_``."""
    per = scalars if isinstance(scalars, (list, tuple)) else [scalars] * len(tensors)
    for t, s in zip(tensors, per):
        t.clamp_(max=s)


def _foreach_clamp_min_(tensors: Any, scalars: Any) -> None:
    """Mirrors: ``torch._foreach_clamp_min_``."""
    per = scalars if isinstance(scalars, (list, tuple)) else [scalars] * len(tensors)
    for t, s in zip(tensors, per):
        t.clamp_(min=s)
