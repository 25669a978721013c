"""`Normal`: the Gaussian distribution. Mirrors: ``torch.distributions.normal``."""

from __future__ import annotations

import math
from typing import Any

from hookgrad._dtypes import Size
from hookgrad._functional import random as _random
from hookgrad._tensor import Tensor
from hookgrad.autograd.grad_mode import no_grad
from hookgrad.distributions import constraints
from hookgrad.distributions.distribution import Distribution, broadcast_all, expand_params

__all__ = ["Normal"]


class Normal(Distribution):
    """Normal distribution with mean `loc` and standard deviation `scale`.

    Example:
        >>> import hookgrad as torch
        >>> d = torch.distributions.Normal(torch.tensor([0.0]), torch.tensor([2.0]))
        >>> d.log_prob(torch.tensor([0.0]))
        tensor([-1.6121])

    Mirrors: ``torch.distributions.Normal``.
    """

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, loc: Any, scale: Any, validate_args: bool | None = None) -> None:
        self.loc, self.scale = broadcast_all(loc, scale)
        super().__init__(self.loc.size(), validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Normal:
        return expand_params(self, Normal, batch_shape, _instance, ("loc", "scale"))

    @property
    def mean(self) -> Tensor:
        return self.loc

    @property
    def mode(self) -> Tensor:
        return self.loc

    @property
    def stddev(self) -> Tensor:
        return self.scale

    @property
    def variance(self) -> Tensor:
        return self.stddev.pow(2)

    def sample(self, sample_shape: Any = Size()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        with no_grad():
            return _random.normal(self.loc.expand(shape), self.scale.expand(shape))

    def rsample(self, sample_shape: Any = Size()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        eps = _random.randn(tuple(shape), dtype=self.loc.dtype)
        return self.loc + eps * self.scale

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        var = self.scale**2
        log_scale = self.scale.log()
        return -((value - self.loc) ** 2) / (2 * var) - log_scale - math.log(math.sqrt(2 * math.pi))

    def cdf(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return 0.5 * (1 + ((value - self.loc) * self.scale.reciprocal() / math.sqrt(2)).erf())

    def icdf(self, value: Tensor) -> Tensor:
        return self.loc + self.scale * (2 * value - 1).erfinv() * math.sqrt(2)

    def entropy(self) -> Tensor:
        return 0.5 + 0.5 * math.log(2 * math.pi) + self.scale.log()
