"""`Weibull`. Mirrors: ``torch.distributions.weibull``."""

from __future__ import annotations

from typing import Any

from hookgrad._tensor import Tensor
from hookgrad.distributions import constraints
from hookgrad.distributions.distribution import broadcast_all
from hookgrad.distributions.exponential import Exponential
from hookgrad.distributions.transformed_distribution import TransformedDistribution
from hookgrad.distributions.transforms import AffineTransform, PowerTransform
from hookgrad.distributions.utils import euler_constant
from hookgrad.distributions import _lower

__all__ = ["Weibull"]


class Weibull(TransformedDistribution):
    """``scale * E ** (1 / concentration)`` for ``E ~ Exponential(1)``.

    Mirrors: ``torch.distributions.Weibull``.
    """

    arg_constraints = {"scale": constraints.positive, "concentration": constraints.positive}
    support = constraints.positive

    def __init__(self, scale: Any, concentration: Any, validate_args: bool | None = None) -> None:
        self.scale, self.concentration = broadcast_all(scale, concentration)
        self.concentration_reciprocal = self.concentration.reciprocal()
        base_dist = Exponential(_lower.ones_like(self.scale), validate_args=validate_args)
        transforms = [PowerTransform(exponent=self.concentration_reciprocal),
                      AffineTransform(loc=0, scale=self.scale)]
        super().__init__(base_dist, transforms, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Weibull:
        new = self._get_checked_instance(Weibull, _instance)
        new.scale = self.scale.expand(batch_shape)
        new.concentration = self.concentration.expand(batch_shape)
        new.concentration_reciprocal = new.concentration.reciprocal()
        base_dist = self.base_dist.expand(batch_shape)
        transforms = [PowerTransform(exponent=new.concentration_reciprocal),
                      AffineTransform(loc=0, scale=new.scale)]
        TransformedDistribution.__init__(new, base_dist, transforms, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self) -> Tensor:
        return self.scale * (1 + self.concentration_reciprocal).lgamma().exp()

    @property
    def mode(self) -> Tensor:
        return self.scale * ((self.concentration - 1) / self.concentration).pow(
            self.concentration.reciprocal())

    @property
    def variance(self) -> Tensor:
        return self.scale.pow(2) * ((1 + 2 * self.concentration_reciprocal).lgamma().exp()
                                    - (1 + self.concentration_reciprocal).lgamma().exp().pow(2))

    def entropy(self) -> Tensor:
        return (euler_constant * (1 - self.concentration_reciprocal)
                + (self.scale * self.concentration_reciprocal).log() + 1)
