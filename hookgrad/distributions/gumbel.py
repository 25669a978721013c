"""`Gumbel` (type-I extreme value). Mirrors: ``torch.distributions.gumbel``."""

from __future__ import annotations

import math
from typing import Any

from hookgrad._tensor import Tensor
from hookgrad.distributions import constraints
from hookgrad.distributions.distribution import broadcast_all
from hookgrad.distributions.transformed_distribution import TransformedDistribution
from hookgrad.distributions.transforms import AffineTransform, ExpTransform
from hookgrad.distributions.uniform import Uniform
from hookgrad.distributions.utils import euler_constant
from hookgrad.distributions import _lower

__all__ = ["Gumbel"]


class Gumbel(TransformedDistribution):
    """``loc - scale * log(-log(U))`` for uniform ``U``. Mirrors: ``torch.distributions.Gumbel``."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real

    def __init__(self, loc: Any, scale: Any, validate_args: bool | None = None) -> None:
        self.loc, self.scale = broadcast_all(loc, scale)
        finfo = _lower.finfo(self.loc.dtype)
        base_dist = Uniform(_lower.full_like(self.loc, finfo.tiny),
                            _lower.full_like(self.loc, 1 - finfo.eps),
                            validate_args=validate_args)
        transforms = [ExpTransform().inv, AffineTransform(loc=0, scale=-_lower.ones_like(
            self.scale)), ExpTransform().inv, AffineTransform(loc=self.loc, scale=-self.scale)]
        super().__init__(base_dist, transforms, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Gumbel:
        new = self._get_checked_instance(Gumbel, _instance)
        new.loc = self.loc.expand(batch_shape)
        new.scale = self.scale.expand(batch_shape)
        return super().expand(batch_shape, _instance=new)

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        y = (self.loc - value) / self.scale
        return (y - y.exp()) - self.scale.log()

    @property
    def mean(self) -> Tensor:
        return self.loc + self.scale * euler_constant

    @property
    def mode(self) -> Tensor:
        return self.loc

    @property
    def stddev(self) -> Tensor:
        return (math.pi / math.sqrt(6)) * self.scale

    @property
    def variance(self) -> Tensor:
        return self.stddev.pow(2)

    def entropy(self) -> Tensor:
        return self.scale.log() + (1 + euler_constant)
