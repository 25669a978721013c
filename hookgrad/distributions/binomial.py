"""`Binomial`: the number of successes in `total_count` independent trials.

Mirrors: ``torch.distributions.binomial`` (curvature libraries such as BackPACK import it at load
time and sample from it for Monte-Carlo curvature estimates). Formulas, validation and messages
are PyTorch's. hookgrad has no differentiable ``lgamma`` yet, so in `log_prob` the
log-factorial terms of `total_count` and `value` are computed as constants: values equal
PyTorch's and gradients flow to `probs`/`logits` (the only differentiable parameters a
distribution over counts has); ``value.grad`` is not formed.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from hookgrad._dtypes import Size
from hookgrad._functional import creation as _creation
from hookgrad._functional import _random_kernels
from hookgrad._functional import random as _random
from hookgrad._tensor import Tensor
from hookgrad.autograd.grad_mode import no_grad
from hookgrad.distributions import constraints
from hookgrad.distributions.categorical import logits_to_probs, probs_to_logits
from hookgrad.distributions.distribution import Distribution, broadcast_all, lazy_property

__all__ = ["Binomial"]

_lgamma = np.vectorize(math.lgamma, otypes=[np.float64])


def _clamp_by_zero(x: Tensor) -> Tensor:
    # clamp(x, min=0) whose gradient at 0 is 0.5, as PyTorch's
    return (x.clamp(min=0) + x - x.clamp(max=0)) / 2


class Binomial(Distribution):
    """Binomial counts with `total_count` trials of success probability `probs` (or
    ``sigmoid(logits)``).

    Example:
        >>> import hookgrad as torch
        >>> d = torch.distributions.Binomial(4, probs=torch.tensor([0.5]))
        >>> d.log_prob(torch.tensor([2.0])).exp(), d.mean
        (tensor([0.3750]), tensor([2.]))

    Mirrors: ``torch.distributions.Binomial``.
    """

    arg_constraints = {"total_count": constraints.nonnegative_integer,
                       "probs": constraints.unit_interval, "logits": constraints.real}
    has_enumerate_support = True

    def __init__(self, total_count: Any = 1, probs: Any = None, logits: Any = None,
                 validate_args: bool | None = None) -> None:
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            self.total_count, self.probs = broadcast_all(total_count, probs)
            self.total_count = self.total_count.type_as(self.probs)
        else:
            self.total_count, self.logits = broadcast_all(total_count, logits)
            self.total_count = self.total_count.type_as(self.logits)
        self._param = self.probs if probs is not None else self.logits
        super().__init__(self._param.size(), validate_args=validate_args)

    @property
    def support(self) -> Any:
        return constraints.integer_interval(0, self.total_count)

    @property
    def mean(self) -> Tensor:
        return self.total_count * self.probs

    @property
    def mode(self) -> Tensor:
        return ((self.total_count + 1) * self.probs).floor().clamp(max=self.total_count)

    @property
    def variance(self) -> Tensor:
        return self.total_count * self.probs * (1 - self.probs)

    @lazy_property
    def logits(self) -> Tensor:
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self) -> Tensor:
        return logits_to_probs(self.logits, is_binary=True)

    @property
    def param_shape(self) -> Size:
        return self._param.size()

    def sample(self, sample_shape: Any = Size()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        with no_grad():
            # PyTorch's sampler and draws (torch.binomial of the expanded parameters)
            dtype = self._param.dtype.np
            n = np.asarray(self.total_count.expand(shape).numpy(), dtype=dtype)
            p = np.asarray(self.probs.expand(shape).numpy(), dtype=dtype)
            draws = _random_kernels.binomial(_random._gen(None), n, p)
            return _creation.tensor(draws, dtype=self._param.dtype)

    def _log_factorial(self, x: Tensor) -> Tensor:
        return _creation.tensor(_lgamma(x.detach().numpy().astype(np.float64) + 1),
                                dtype=self._param.dtype)

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        n = self.total_count
        normalize = (n * _clamp_by_zero(self.logits)
                     + n * (-self.logits.abs()).exp().log1p() - self._log_factorial(n))
        return (value * self.logits - self._log_factorial(value)
                - self._log_factorial(n - value) - normalize)

    def entropy(self) -> Tensor:
        if not self.total_count.min() == int(self.total_count.max()):
            raise NotImplementedError("Inhomogeneous total count not supported by `entropy`.")
        values = self.enumerate_support(False)
        log_prob = self.log_prob(values)
        return -(log_prob.exp() * log_prob).sum(0)

    def enumerate_support(self, expand: bool = True) -> Tensor:
        total = int(self.total_count.max())
        if not self.total_count.min() == total:
            raise NotImplementedError(
                "Inhomogeneous total count not supported by `enumerate_support`.")
        values = _creation.arange(1 + total, dtype=self._param.dtype)
        values = values.view((-1,) + (1,) * len(self._batch_shape))
        if expand:
            values = values.expand((-1,) + tuple(self._batch_shape))
        return values
