"""`Exponential` with rate ``rate``. Mirrors: ``torch.distributions.exponential``."""

from __future__ import annotations

from typing import Any

from hookgrad._dtypes import Size
from hookgrad._tensor import Tensor
from hookgrad.distributions import constraints
from hookgrad.distributions._scalar_family import ParamDistribution
from hookgrad.distributions.exp_family import ExponentialFamily
from hookgrad.distributions import _lower

__all__ = ["Exponential"]


class Exponential(ParamDistribution, ExponentialFamily):
    """Density ``rate * exp(-rate * x)`` on ``x >= 0``. Mirrors: ``torch.distributions.Exponential``."""

    arg_constraints = {"rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True
    _mean_carrier_measure = 0
    _params = ("rate",)

    def __init__(self, rate: Any, validate_args: bool | None = None) -> None:
        self._set_params((rate,), validate_args)

    @property
    def mean(self) -> Tensor:
        return self.rate.reciprocal()

    @property
    def mode(self) -> Tensor:
        return _lower.zeros_like(self.rate)

    @property
    def stddev(self) -> Tensor:
        return self.rate.reciprocal()

    @property
    def variance(self) -> Tensor:
        return self.rate.pow(-2)

    def rsample(self, sample_shape: Any = Size()) -> Tensor:
        return self._draw(sample_shape, "exponential") / self.rate

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return self.rate.log() - self.rate * value

    def cdf(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return 1 - (-self.rate * value).exp()

    def icdf(self, value: Tensor) -> Tensor:
        return -(-value).log1p() / self.rate

    def entropy(self) -> Tensor:
        return 1.0 - self.rate.log()

    @property
    def _natural_params(self) -> tuple:
        return (-self.rate,)

    def _log_normalizer(self, x: Tensor) -> Tensor:
        return -(-x).log()
