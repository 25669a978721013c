"""``torch._standard_gamma`` and ``torch._standard_gamma_grad``: Gamma(alpha, 1) draws by
PyTorch's sampler from PyTorch's random stream with PyTorch's reparametrised gradient (what the Gamma-family
distributions' ``rsample`` uses).

Mirrors: ``torch._standard_gamma``, ``torch._standard_gamma_grad``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from hookgrad import _backend
from hookgrad._dispatch import bind
from hookgrad._functional import _random_kernels as K
from hookgrad._functional.random import _gen
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
    alpha = np.asarray(backend.to_host(input._data), dtype=input.dtype.np)
    with np.errstate(all="ignore"):
        draws = K.standard_gamma(_gen(generator), alpha)
    return bind(STANDARD_GAMMA, (input, Tensor._make(backend.from_host(draws))), {})


def _standard_gamma_grad(self: Tensor, output: Tensor) -> Tensor:
    """``d output / d self`` of Gamma(`self`, 1) samples `output`.

    Mirrors: ``torch._standard_gamma_grad``.
    """
    return bind(STANDARD_GAMMA_GRAD, (self, output), {})
