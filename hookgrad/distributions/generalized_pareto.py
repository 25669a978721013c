"""`GeneralizedPareto`. Mirrors: ``torch.distributions.generalized_pareto``."""

from __future__ import annotations

import math
import numbers
from typing import Any

from hookgrad._dtypes import Size
from hookgrad._tensor import Tensor
from hookgrad.distributions import _lower, constraints
from hookgrad.distributions.distribution import Distribution, broadcast_all

__all__ = ["GeneralizedPareto"]


class GeneralizedPareto(Distribution):
    """Peaks over a threshold: location `loc`, scale `scale`, shape `concentration`
    (zero gives the shifted exponential, negative a bounded support).

    Mirrors: ``torch.distributions.GeneralizedPareto``.
    """

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive,
                       "concentration": constraints.real}
    has_rsample = True

    def __init__(self, loc: Any, scale: Any, concentration: Any,
                 validate_args: bool | None = None) -> None:
        self.loc, self.scale, self.concentration = broadcast_all(loc, scale, concentration)
        scalar = all(isinstance(v, numbers.Number) for v in (loc, scale, concentration))
        super().__init__(Size() if scalar else self.loc.size(), validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> GeneralizedPareto:
        new = self._get_checked_instance(GeneralizedPareto, _instance)
        batch_shape = Size(batch_shape)
        for name in ("loc", "scale", "concentration"):
            setattr(new, name, getattr(self, name).expand(batch_shape))
        Distribution.__init__(new, batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def rsample(self, sample_shape: Any = Size()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        return self.icdf(_lower.rand(shape, dtype=self.loc.dtype, device=self.loc.device))

    def _zero_and_safe(self) -> tuple:
        """Where `concentration` is (close to) zero, and a copy with those entries set to one
        so that the unused branch stays finite. PyTorch compares with a default-dtype zero,
        so a float64 concentration raises there; this does the same."""
        eq_zero = self.concentration.isclose(_lower.as_tensor(0.0))
        safe = _lower.where(eq_zero, _lower.ones_like(self.concentration), self.concentration)
        return eq_zero, safe

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        z = self._z(value)
        eq_zero, safe = self._zero_and_safe()
        y = 1 / safe + _lower.ones_like(z)
        nonzero = _lower.where(y == 0, y, y * (safe * z).log1p())
        log_scale = (math.log(self.scale) if isinstance(self.scale, numbers.Real)
                     else self.scale.log())
        return -log_scale - _lower.where(eq_zero, z, nonzero)

    def log_survival_function(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        z = self._z(value)
        eq_zero, safe = self._zero_and_safe()
        return _lower.where(eq_zero, -z, -(safe * z).log1p() / safe)

    def log_cdf(self, value: Tensor) -> Tensor:
        return (-self.log_survival_function(value).exp()).log1p()

    def cdf(self, value: Tensor) -> Tensor:
        return self.log_cdf(value).exp()

    def icdf(self, value: Tensor) -> Tensor:
        conc = self.concentration
        eq_zero = conc.isclose(_lower.zeros_like(conc))
        safe = _lower.where(eq_zero, _lower.ones_like(conc), conc)
        log_u = (-value).log1p()
        nonzero = self.loc + self.scale / safe * (-safe * log_u).expm1()
        return _lower.where(eq_zero, self.loc - self.scale * log_u, nonzero)

    def _z(self, x: Tensor) -> Tensor:
        return (x - self.loc) / self.scale

    @property
    def mean(self) -> Tensor:
        valid = self.concentration < 1  # infinite mean otherwise: NaN, as in PyTorch
        safe = _lower.where(valid, self.concentration, 0.5)
        return _lower.where(valid, self.loc + self.scale / (1 - safe), math.nan)

    @property
    def variance(self) -> Tensor:
        valid = self.concentration < 0.5
        safe = _lower.where(valid, self.concentration, 0.25)
        result = self.scale ** 2 / ((1 - safe) ** 2 * (1 - 2 * safe))
        return _lower.where(valid, result, math.nan)

    def entropy(self) -> Tensor:
        return (self.scale.log() + self.concentration + 1).broadcast_to(self._batch_shape)

    @property
    def mode(self) -> Tensor:
        return self.loc

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self) -> constraints.Constraint:
        # bounded above by loc - scale / concentration when the concentration is negative
        lower = self.loc
        upper = _lower.where(self.concentration < 0, lower - self.scale / self.concentration,
                             math.inf)
        return constraints.interval(lower, upper)
