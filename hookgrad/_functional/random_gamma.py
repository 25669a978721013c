"""``torch._standard_gamma``, ``torch._sample_dirichlet`` and their gradient kernels: Gamma and
Dirichlet draws by PyTorch's sampler from PyTorch's random stream, with PyTorch's reparametrised
gradients (what the Gamma-family, Beta and Dirichlet distributions' ``rsample`` use).

Mirrors: ``torch._standard_gamma``, ``torch._standard_gamma_grad``, ``torch._sample_dirichlet``,
``torch._dirichlet_grad``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from hookgrad import _backend
from hookgrad._dispatch import bind
from hookgrad._functional import _random_kernels as K
from hookgrad._functional.random import _gen
from hookgrad._ops.random_gamma import DIRICHLET_GRAD, STANDARD_GAMMA, STANDARD_GAMMA_GRAD
from hookgrad._tensor import Tensor

__all__ = ["_dirichlet_grad", "_sample_dirichlet", "_standard_gamma", "_standard_gamma_grad"]


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


def _sample_dirichlet(input: Tensor, generator: Any = None) -> Tensor:
    """Dirichlet(`input`) samples along the last dim, not differentiable.

    As ATen's kernel: Gamma draws from the concentrations cast to double, normalised in double,
    cast back and kept inside ``[tiny, 1 - eps]`` of the dtype.

    Mirrors: ``torch._sample_dirichlet``.
    """
    from hookgrad._dtypes import finfo
    draws = _standard_gamma(input.detach().double(), generator)
    value = (draws / draws.sum(-1, True)).to(input.dtype)
    info = finfo(value.dtype)
    return value.clamp_(min=info.tiny, max=1 - info.eps)


def _dirichlet_grad(x: Tensor, alpha: Tensor, total: Tensor) -> Tensor:
    """``d x / d alpha`` of Beta-marginal samples `x` with concentrations `alpha` and
    ``total - alpha`` (ATen's approximation), as ``Dirichlet``'s backward uses it.

    Mirrors: ``torch._dirichlet_grad``.
    """
    return bind(DIRICHLET_GRAD, (x, alpha, total), {})
