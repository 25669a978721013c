"""`StudentT`. Mirrors: ``torch.distributions.studentT``."""

from __future__ import annotations

import math
from typing import Any

from hookgrad._dtypes import Size
from hookgrad._tensor import Tensor
from hookgrad.distributions import _lower, constraints
from hookgrad.distributions._scalar_family import ParamDistribution
from hookgrad.distributions.chi2 import Chi2

__all__ = ["StudentT"]


class StudentT(ParamDistribution):
    """Student's t with `df` degrees of freedom, location `loc` and scale `scale`.

    Mirrors: ``torch.distributions.StudentT``.
    """

    arg_constraints = {"df": constraints.positive, "loc": constraints.real,
                       "scale": constraints.positive}
    support = constraints.real
    has_rsample = True
    _params = ("df", "loc", "scale")

    def __init__(self, df: Any, loc: Any = 0.0, scale: Any = 1.0,
                 validate_args: bool | None = None) -> None:
        self._set_params((df, loc, scale), validate_args)
        self._chi2 = Chi2(self.df)

    def expand(self, batch_shape: Any, _instance: Any = None) -> StudentT:
        new = super().expand(batch_shape, _instance)
        new._chi2 = self._chi2.expand(batch_shape)
        return new

    @property
    def mean(self) -> Tensor:
        return _lower.where(self.df > 1, self.loc, math.nan)

    @property
    def mode(self) -> Tensor:
        return self.loc

    @property
    def variance(self) -> Tensor:
        df = self.df
        finite = self.scale.pow(2) * df / (df - 2)
        out = _lower.where(df > 2, finite, math.inf)
        return _lower.where(df <= 1, math.nan, out)

    def rsample(self, sample_shape: Any = Size()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        x = _lower.randn(tuple(shape), dtype=self.df.dtype, device=self.df.device)
        z = self._chi2.rsample(sample_shape)
        y = x * (z / self.df).rsqrt()
        return self.loc + self.scale * y

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        y = (value - self.loc) / self.scale
        df = self.df
        z = (self.scale.log() + 0.5 * df.log() + 0.5 * math.log(math.pi) + (0.5 * df).lgamma()
             - (0.5 * (df + 1.0)).lgamma())
        return -0.5 * (df + 1.0) * (y.pow(2) / df).log1p() - z

    def entropy(self) -> Tensor:
        df = self.df
        lbeta = (0.5 * df).lgamma() + math.lgamma(0.5) - (0.5 * (df + 1)).lgamma()
        return (self.scale.log() + 0.5 * (df + 1) * ((0.5 * (df + 1)).digamma()
                                                    - (0.5 * df).digamma())
                + 0.5 * df.log() + lbeta)
