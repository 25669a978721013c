"""`Laplace` (double exponential). Mirrors: ``torch.distributions.laplace``."""

from __future__ import annotations

from typing import Any

from hookgrad._dtypes import Size
from hookgrad._tensor import Tensor
from hookgrad.distributions import constraints
from hookgrad.distributions._scalar_family import ParamDistribution
from hookgrad.distributions import _lower

__all__ = ["Laplace"]


class Laplace(ParamDistribution):
    """Density ``exp(-|x - loc| / scale) / (2 scale)``. Mirrors: ``torch.distributions.Laplace``."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True
    _params = ("loc", "scale")

    def __init__(self, loc: Any, scale: Any, validate_args: bool | None = None) -> None:
        self._set_params((loc, scale), validate_args)

    @property
    def mean(self) -> Tensor:
        return self.loc

    @property
    def mode(self) -> Tensor:
        return self.loc

    @property
    def variance(self) -> Tensor:
        return 2 * self.scale.pow(2)

    @property
    def stddev(self) -> Tensor:
        return (2**0.5) * self.scale

    def rsample(self, sample_shape: Any = Size()) -> Tensor:
        eps = _lower.finfo(self.loc.dtype).eps
        u = self._draw(sample_shape, "uniform", eps - 1, 1)
        # u in (-1, 1): the sign picks the side, |u| the inverse CDF of the half
        return self.loc - self.scale * u.sign() * (-u.abs()).log1p()

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return -(2 * self.scale).log() - (value - self.loc).abs() / self.scale

    def cdf(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return 0.5 - 0.5 * (value - self.loc).sign() * (
            -(value - self.loc).abs() / self.scale).expm1()

    def icdf(self, value: Tensor) -> Tensor:
        term = value - 0.5
        return self.loc - self.scale * term.sign() * (-2 * term.abs()).log1p()

    def entropy(self) -> Tensor:
        return 1 + (2 * self.scale).log()
