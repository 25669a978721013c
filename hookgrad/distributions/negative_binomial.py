"""`NegativeBinomial`. Mirrors: ``torch.distributions.negative_binomial``."""

from __future__ import annotations

from typing import Any

from hookgrad._dtypes import Size
from hookgrad._tensor import Tensor
from hookgrad.autograd.grad_mode import no_grad
from hookgrad.distributions import _lower, constraints
from hookgrad.distributions.distribution import Distribution, broadcast_all, lazy_property
from hookgrad.distributions.gamma import Gamma
from hookgrad.distributions.poisson import Poisson
from hookgrad.distributions.utils import logits_to_probs, probs_to_logits

__all__ = ["NegativeBinomial"]


class NegativeBinomial(Distribution):
    """Successes of Bernoulli(`probs`) trials before `total_count` failures.

    Mirrors: ``torch.distributions.NegativeBinomial``.
    """

    arg_constraints = {"total_count": constraints.greater_than_eq(0),
                       "probs": constraints.half_open_interval(0.0, 1.0),
                       "logits": constraints.real}
    support = constraints.nonnegative_integer

    def __init__(self, total_count: Any, probs: Any = None, logits: Any = None,
                 validate_args: bool | None = None) -> None:
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        name, given = ("probs", probs) if probs is not None else ("logits", logits)
        count, param = broadcast_all(total_count, given)
        setattr(self, name, param)
        self.total_count = count.type_as(param)
        self._param = param
        super().__init__(param.size(), validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> NegativeBinomial:
        new = self._get_checked_instance(NegativeBinomial, _instance)
        batch_shape = Size(batch_shape)
        new.total_count = self.total_count.expand(batch_shape)
        for name in ("probs", "logits"):
            if name in self.__dict__:
                setattr(new, name, self.__dict__[name].expand(batch_shape))
                new._param = new.__dict__[name]
        Distribution.__init__(new, batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _new(self, *args: Any, **kwargs: Any) -> Tensor:
        return self._param.new(*args, **kwargs)

    @property
    def mean(self) -> Tensor:
        return self.total_count * self.logits.exp()

    @property
    def mode(self) -> Tensor:
        return ((self.total_count - 1) * self.logits.exp()).floor().clamp(min=0.0)

    @property
    def variance(self) -> Tensor:
        return self.mean / (-self.logits).sigmoid()

    @lazy_property
    def logits(self) -> Tensor:
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self) -> Tensor:
        return logits_to_probs(self.logits, is_binary=True)

    @property
    def param_shape(self) -> Size:
        return self._param.size()

    @lazy_property
    def _gamma(self) -> Gamma:
        # unvalidated: a total_count of zero is allowed here but not by Gamma
        return Gamma(concentration=self.total_count, rate=(-self.logits).exp(),
                     validate_args=False)

    def sample(self, sample_shape: Any = Size()) -> Tensor:
        # a Poisson draw whose rate is Gamma-distributed
        with no_grad():
            rate = self._gamma.sample(sample_shape)
            return Poisson(rate, validate_args=False).sample()

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        logsigmoid = _lower.functional.logsigmoid
        unnormalized = (self.total_count * logsigmoid(-self.logits)
                        + value * logsigmoid(self.logits))
        normalization = (-(self.total_count + value).lgamma() + (1.0 + value).lgamma()
                         + self.total_count.lgamma())
        # total_count == value == 0 has probability one, though lgamma(0) is infinite
        normalization = normalization.masked_fill(self.total_count + value == 0.0, 0.0)
        return unnormalized - normalization
