"""`Gamma`. Mirrors: ``torch.distributions.gamma``."""

from __future__ import annotations

from typing import Any

from hookgrad._dtypes import Size
from hookgrad._functional.random_gamma import _standard_gamma
from hookgrad._tensor import Tensor
from hookgrad.distributions import _lower, constraints
from hookgrad.distributions._scalar_family import ParamDistribution
from hookgrad.distributions.exp_family import ExponentialFamily

__all__ = ["Gamma"]


def _xlogy(x: Tensor, y: Tensor) -> Tensor:
    from hookgrad._surface.math_ops import xlogy
    return xlogy(x, y)


class Gamma(ParamDistribution, ExponentialFamily):
    """Shape `concentration`, inverse scale `rate`. Mirrors: ``torch.distributions.Gamma``."""

    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True
    _mean_carrier_measure = 0
    _params = ("concentration", "rate")

    def __init__(self, concentration: Any, rate: Any, validate_args: bool | None = None) -> None:
        self._set_params((concentration, rate), validate_args)

    @property
    def mean(self) -> Tensor:
        return self.concentration / self.rate

    @property
    def mode(self) -> Tensor:
        return ((self.concentration - 1) / self.rate).clamp(min=0)

    @property
    def variance(self) -> Tensor:
        return self.concentration / self.rate.pow(2)

    def rsample(self, sample_shape: Any = Size()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        value = _standard_gamma(self.concentration.expand(shape)) / self.rate.expand(shape)
        value.detach().clamp_(min=_lower.finfo(value.dtype).tiny)  # outside the graph
        return value

    def log_prob(self, value: Any) -> Tensor:
        value = _lower.as_tensor(value, dtype=self.rate.dtype, device=self.rate.device)
        if self._validate_args:
            self._validate_sample(value)
        return (_xlogy(self.concentration, self.rate) + _xlogy(self.concentration - 1, value)
                - self.rate * value - self.concentration.lgamma())

    def entropy(self) -> Tensor:
        c = self.concentration
        return c - self.rate.log() + c.lgamma() + (1.0 - c) * c.digamma()

    @property
    def _natural_params(self) -> tuple:
        return (self.concentration - 1, -self.rate)

    def _log_normalizer(self, x: Tensor, y: Tensor) -> Tensor:
        return (x + 1).lgamma() + (x + 1) * (-y.reciprocal()).log()

    def cdf(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return self.concentration.igamma(self.rate * value)

