"""`Multinomial`: counts of `total_count` categorical draws.

Mirrors: ``torch.distributions.multinomial``.
"""

from __future__ import annotations

from typing import Any

from hookgrad._dtypes import Size
from hookgrad._tensor import Tensor
from hookgrad.distributions import _lower, constraints
from hookgrad.distributions.categorical import Categorical
from hookgrad.distributions.distribution import Distribution, broadcast_all

__all__ = ["Multinomial"]


class Multinomial(Distribution):
    """Mirrors: ``torch.distributions.Multinomial``."""

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.independent(
        constraints.real, 1)}
    total_count: int

    def __init__(self, total_count: int = 1, probs: Any = None, logits: Any = None,
                 validate_args: bool | None = None) -> None:
        if not isinstance(total_count, int):
            raise NotImplementedError("inhomogeneous total_count is not supported")
        self.total_count = total_count
        self._categorical = Categorical(probs=probs, logits=logits)
        batch_shape = self._categorical.batch_shape
        event_shape = self._categorical.param_shape[-1:]
        super().__init__(batch_shape, event_shape, validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Multinomial:
        new = self._get_checked_instance(Multinomial, _instance)
        batch_shape = Size(batch_shape)
        new.total_count = self.total_count
        new._categorical = self._categorical.expand(batch_shape)
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @constraints.dependent_property(is_discrete=True, event_dim=1)
    def support(self) -> constraints.Constraint:  # type: ignore[override]
        return constraints.multinomial(self.total_count)

    @property
    def mean(self) -> Tensor:
        return self.probs * self.total_count

    @property
    def variance(self) -> Tensor:
        return self.total_count * self.probs * (1 - self.probs)

    @property
    def logits(self) -> Tensor:
        return self._categorical.logits

    @property
    def probs(self) -> Tensor:
        return self._categorical.probs

    @property
    def param_shape(self) -> Size:
        return self._categorical.param_shape

    def sample(self, sample_shape: Any = Size()) -> Tensor:
        sample_shape = Size(sample_shape)
        draws = self._categorical.sample(Size((self.total_count,)) + sample_shape)
        order = list(range(draws.dim()))
        order.append(order.pop(0))
        draws = draws.permute(*order)
        counts = _lower.zeros_like(self.probs.expand(self._extended_shape(sample_shape)),
                                   dtype=draws.dtype)
        counts.scatter_add_(-1, draws, _lower.ones_like(draws))
        return counts.type_as(self.probs)

    def entropy(self) -> Tensor:
        n = self.total_count
        probs = self.probs
        term1 = n * self._categorical.entropy() - _lower.as_tensor(float(n + 1)).lgamma()
        k = _lower.arange(1, n + 1, dtype=probs.dtype).reshape((-1,) + (1,) * probs.dim())
        # the binomial probability of k successes for each category
        log_binom = ((_lower.as_tensor(float(n + 1), dtype=probs.dtype)).lgamma()
                     - (k + 1).lgamma() - (n - k + 1).lgamma()
                     + k * probs.log() + (n - k) * (-probs).log1p())
        term2 = (log_binom.exp() * (k + 1).lgamma()).sum([0, -1])
        return term1 + term2

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        logits = logits.clone(memory_format=_lower.contiguous_format)
        log_factorial_n = (value.sum(-1) + 1).lgamma()
        log_factorial_xs = (value + 1).lgamma().sum(-1)
        logits[(value == 0) & (logits == -float("inf"))] = 0
        return log_factorial_n - log_factorial_xs + (logits * value).sum(-1)
