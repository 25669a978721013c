"""``torch._standard_gamma`` and ``torch._standard_gamma_grad``: Gamma(alpha, 1) draws from
hookgrad's generator with PyTorch's reparametrised gradient (what the Gamma-family
distributions' ``rsample`` uses).

Mirrors: ``torch._standard_gamma``, ``torch._standard_gamma_grad``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from hookgrad import _backend
from hookgrad._dispatch import bind
from hookgrad._functional.random import _rng
from hookgrad._ops.random_gamma import STANDARD_GAMMA, STANDARD_GAMMA_GRAD
from hookgrad._tensor import Tensor

__all__ = ["_standard_gamma", "_standard_gamma_grad"]


def _standard_gamma(input: Tensor, generator: Any = None) -> Tensor:
    """Gamma(`input`, 1) samples; differentiable in `input` (``StandardGammaBackward0``).

    Mirrors: ``torch._standard_gamma``.
    """
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f'"gamma_cpu" not implemented for \'{input.dtype.scalar_type}\'')
    backend = _backend.backend_of(input._data)
    alpha = np.asarray(backend.to_host(input._data), dtype=np.float64)
    with np.errstate(all="ignore"):
        draws = _rng(generator).standard_gamma(np.where(alpha > 0, alpha, 1.0))
    # a non-positive or NaN concentration gives the clamped zero, as in PyTorch
    draws = np.where(alpha > 0, draws, 0.0)
    # PyTorch clamps samples to the smallest positive normal of the dtype (never exactly 0)
    draws = np.maximum(draws, np.finfo(input.dtype.np).tiny).astype(input.dtype.np)
    return bind(STANDARD_GAMMA, (input, Tensor._make(backend.from_host(draws))), {})


def _standard_gamma_grad(self: Tensor, output: Tensor) -> Tensor:
    """``d output / d self`` of Gamma(`self`, 1) samples `output`.

    Mirrors: ``torch._standard_gamma_grad``.
    """
    return bind(STANDARD_GAMMA_GRAD, (self, output), {})
