"""`Uniform` on ``[low, high)``. Mirrors: ``torch.distributions.uniform``."""

from __future__ import annotations

from typing import Any

from hookgrad._dtypes import Size
from hookgrad._tensor import Tensor
from hookgrad.distributions import constraints
from hookgrad.distributions._scalar_family import ParamDistribution
from hookgrad.distributions import _lower

__all__ = ["Uniform"]


class Uniform(ParamDistribution):
    """Uniform on the half-open interval ``[low, high)``. Mirrors: ``torch.distributions.Uniform``."""

    has_rsample = True
    _params = ("low", "high")

    def __init__(self, low: Any, high: Any, validate_args: bool | None = None) -> None:
        self._set_params((low, high), validate_args)

    @property
    def arg_constraints(self) -> dict:  # type: ignore[override]
        return {"low": constraints.less_than(self.high),
                "high": constraints.greater_than(self.low)}

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self) -> constraints.Constraint:  # type: ignore[override]
        return constraints.interval(self.low, self.high)

    @property
    def mean(self) -> Tensor:
        return (self.high + self.low) / 2

    @property
    def mode(self) -> Tensor:
        return float("nan") * self.high

    @property
    def stddev(self) -> Tensor:
        return (self.high - self.low) / 12**0.5

    @property
    def variance(self) -> Tensor:
        return (self.high - self.low).pow(2) / 12

    def rsample(self, sample_shape: Any = Size()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        rand = _lower.rand(shape, dtype=self.low.dtype, device=self.low.device)
        return self.low + rand * (self.high - self.low)

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        lb = self.low.le(value).type_as(self.low)
        ub = self.high.gt(value).type_as(self.low)
        return (lb.mul(ub)).log() - (self.high - self.low).log()

    def cdf(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        result = (value - self.low) / (self.high - self.low)
        return result.clamp(min=0, max=1)

    def icdf(self, value: Tensor) -> Tensor:
        return value * (self.high - self.low) + self.low

    def entropy(self) -> Tensor:
        return (self.high - self.low).log()
