"""`Cauchy` (Lorentz). Mirrors: ``torch.distributions.cauchy``."""

from __future__ import annotations

import math
from typing import Any

from hookgrad._dtypes import Size
from hookgrad._tensor import Tensor
from hookgrad.distributions import constraints
from hookgrad.distributions._scalar_family import ParamDistribution
from hookgrad.distributions import _lower

__all__ = ["Cauchy"]


class Cauchy(ParamDistribution):
    """The ratio of two independent normals: heavy tails, no mean.

    Mirrors: ``torch.distributions.Cauchy``.
    """

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True
    _params = ("loc", "scale")

    def __init__(self, loc: Any, scale: Any, validate_args: bool | None = None) -> None:
        self._set_params((loc, scale), validate_args)

    @property
    def mean(self) -> Tensor:
        return _lower.full(self._extended_shape(), math.nan, dtype=self.loc.dtype,
                             device=self.loc.device)

    @property
    def mode(self) -> Tensor:
        return self.loc

    @property
    def variance(self) -> Tensor:
        return _lower.full(self._extended_shape(), math.inf, dtype=self.loc.dtype,
                             device=self.loc.device)

    def rsample(self, sample_shape: Any = Size()) -> Tensor:
        return self.loc + self._draw(sample_shape, "cauchy") * self.scale

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return (-math.log(math.pi) - self.scale.log()
                - (((value - self.loc) / self.scale) ** 2).log1p())

    def cdf(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return ((value - self.loc) / self.scale).atan() / math.pi + 0.5

    def icdf(self, value: Tensor) -> Tensor:
        return (math.pi * (value - 0.5)).tan() * self.scale + self.loc

    def entropy(self) -> Tensor:
        return math.log(4 * math.pi) + self.scale.log()
