"""`Poisson`. Mirrors: ``torch.distributions.poisson``."""

from __future__ import annotations

from typing import Any

import numpy as np

from hookgrad._dtypes import Size
from hookgrad._functional import _random_kernels
from hookgrad._functional.random import _gen
from hookgrad._tensor import Tensor
from hookgrad.distributions import _lower, constraints
from hookgrad.distributions._scalar_family import ParamDistribution
from hookgrad.distributions.distribution import broadcast_all
from hookgrad.distributions.exp_family import ExponentialFamily

__all__ = ["Poisson"]


class Poisson(ParamDistribution, ExponentialFamily):
    """Counts with mean `rate`. Mirrors: ``torch.distributions.Poisson``."""

    arg_constraints = {"rate": constraints.nonnegative}
    support = constraints.nonnegative_integer
    _params = ("rate",)

    def __init__(self, rate: Any, validate_args: bool | None = None) -> None:
        self._set_params((rate,), validate_args)

    @property
    def mean(self) -> Tensor:
        return self.rate

    @property
    def mode(self) -> Tensor:
        return self.rate.floor()

    @property
    def variance(self) -> Tensor:
        return self.rate

    def sample(self, sample_shape: Any = Size()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        rate = np.broadcast_to(self.rate.detach().numpy(), tuple(shape))
        # PyTorch's sampler and draws (torch.poisson of the expanded rate)
        draws = _random_kernels.poisson(_gen(None), rate).astype(rate.dtype)
        return _lower.as_tensor(draws)

    def log_prob(self, value: Tensor) -> Tensor:
        from hookgrad._surface.math_ops import xlogy
        if self._validate_args:
            self._validate_sample(value)
        rate, value = broadcast_all(self.rate, value)
        return xlogy(value, rate) - rate - (value + 1).lgamma()

    @property
    def _natural_params(self) -> tuple:
        return (self.rate.log(),)

    def _log_normalizer(self, x: Tensor) -> Tensor:
        return x.exp()
