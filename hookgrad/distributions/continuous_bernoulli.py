"""`ContinuousBernoulli`. Mirrors: ``torch.distributions.continuous_bernoulli``."""

from __future__ import annotations

import math
import numbers
from typing import Any

from hookgrad._dtypes import Size
from hookgrad._tensor import Tensor
from hookgrad.autograd.grad_mode import no_grad
from hookgrad.distributions import _lower, constraints
from hookgrad.distributions.distribution import Distribution, broadcast_all, lazy_property
from hookgrad.distributions.exp_family import ExponentialFamily
from hookgrad.distributions.utils import clamp_probs, logits_to_probs, probs_to_logits

__all__ = ["ContinuousBernoulli"]


class ContinuousBernoulli(ExponentialFamily):
    """The continuous Bernoulli on ``[0, 1]`` (Loaiza-Ganem & Cunningham, 2019).

    Near ``probs == 0.5`` the closed forms divide 0 by 0, so inside ``lims`` they are replaced
    by their Taylor expansions, as PyTorch does.

    Mirrors: ``torch.distributions.ContinuousBernoulli``.
    """

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.unit_interval
    _mean_carrier_measure = 0
    has_rsample = True

    def __init__(self, probs: Any = None, logits: Any = None, lims: tuple = (0.499, 0.501),
                 validate_args: bool | None = None) -> None:
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            is_scalar = isinstance(probs, numbers.Number)
            (probs,) = broadcast_all(probs)
            # checked before clamping, which would hide values outside [0, 1]
            if validate_args is not None and not bool(
                    self.arg_constraints["probs"].check(probs).all()):
                raise ValueError("The parameter probs has invalid values")
            self.probs = clamp_probs(probs)
            self._param = self.probs
        else:
            is_scalar = isinstance(logits, numbers.Number)
            (self.logits,) = broadcast_all(logits)
            self._param = self.logits
        self._lims = lims
        batch_shape = Size() if is_scalar else self._param.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> ContinuousBernoulli:
        new = self._get_checked_instance(ContinuousBernoulli, _instance)
        new._lims = self._lims
        batch_shape = Size(batch_shape)
        for name in ("probs", "logits"):
            if name in self.__dict__:
                setattr(new, name, self.__dict__[name].expand(batch_shape))
                new._param = new.__dict__[name]
        Distribution.__init__(new, batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _new(self, *args: Any, **kwargs: Any) -> Tensor:
        return self._param.new(*args, **kwargs)

    def _outside_unstable_region(self) -> Tensor:
        return (self.probs <= self._lims[0]) | (self.probs > self._lims[1])

    def _cut_probs(self) -> Tensor:
        """`probs`, with the unstable region replaced by a safe value (whose result is unused)."""
        return _lower.where(self._outside_unstable_region(), self.probs,
                            self._lims[0] * _lower.ones_like(self.probs))

    def _cont_bern_log_norm(self) -> Tensor:
        """The log normalising constant as a function of `probs`."""
        cut = self._cut_probs()
        low = cut <= 0.5
        below_half = _lower.where(low, cut, _lower.zeros_like(cut))
        above_half = _lower.where(cut >= 0.5, cut, _lower.ones_like(cut))
        log_norm = ((-cut).log1p() - cut.log()).abs().log() - _lower.where(
            low, (-2.0 * below_half).log1p(), (2.0 * above_half - 1.0).log())
        x = (self.probs - 0.5).pow(2)
        taylor = math.log(2.0) + (4.0 / 3.0 + 104.0 / 45.0 * x) * x
        return _lower.where(self._outside_unstable_region(), log_norm, taylor)

    @property
    def mean(self) -> Tensor:
        cut = self._cut_probs()
        mus = cut / (2.0 * cut - 1.0) + 1.0 / ((-cut).log1p() - cut.log())
        x = self.probs - 0.5
        taylor = 0.5 + (1.0 / 3.0 + 16.0 / 45.0 * x.pow(2)) * x
        return _lower.where(self._outside_unstable_region(), mus, taylor)

    @property
    def stddev(self) -> Tensor:
        return self.variance.sqrt()

    @property
    def variance(self) -> Tensor:
        cut = self._cut_probs()
        var = (cut * (cut - 1.0) / (1.0 - 2.0 * cut).pow(2)
               + 1.0 / ((-cut).log1p() - cut.log()).pow(2))
        x = (self.probs - 0.5).pow(2)
        taylor = 1.0 / 12.0 - (1.0 / 15.0 - 128.0 / 945.0 * x) * x
        return _lower.where(self._outside_unstable_region(), var, taylor)

    @lazy_property
    def logits(self) -> Tensor:
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self) -> Tensor:
        return clamp_probs(logits_to_probs(self.logits, is_binary=True))

    @property
    def param_shape(self) -> Size:
        return self._param.size()

    def sample(self, sample_shape: Any = Size()) -> Tensor:
        with no_grad():
            return self.rsample(sample_shape)

    def rsample(self, sample_shape: Any = Size()) -> Tensor:
        # inverse-cdf sampling keeps the draw differentiable in the parameters
        shape = self._extended_shape(sample_shape)
        u = _lower.rand(shape, dtype=self.probs.dtype, device=self.probs.device)
        return self.icdf(u)

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        bce = _lower.functional.binary_cross_entropy_with_logits
        return -bce(logits, value, reduction="none") + self._cont_bern_log_norm()

    def cdf(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        cut = self._cut_probs()
        cdfs = (cut.pow(value) * (1.0 - cut).pow(1.0 - value) + cut - 1.0) / (2.0 * cut - 1.0)
        unbounded = _lower.where(self._outside_unstable_region(), cdfs, value)
        return _lower.where(value <= 0.0, _lower.zeros_like(value),
                            _lower.where(value >= 1.0, _lower.ones_like(value), unbounded))

    def icdf(self, value: Tensor) -> Tensor:
        cut = self._cut_probs()
        inverted = (((-cut + value * (2.0 * cut - 1.0)).log1p() - (-cut).log1p())
                    / (cut.log() - (-cut).log1p()))
        return _lower.where(self._outside_unstable_region(), inverted, value)

    def entropy(self) -> Tensor:
        log_p0 = (-self.probs).log1p()
        log_p1 = self.probs.log()
        return self.mean * (log_p0 - log_p1) - self._cont_bern_log_norm() - log_p0

    @property
    def _natural_params(self) -> tuple:
        return (self.logits,)

    def _log_normalizer(self, x: Tensor) -> Tensor:
        """The log normalising constant as a function of the natural parameter `x`."""
        outside = (x <= self._lims[0] - 0.5) | (x > self._lims[1] - 0.5)
        cut = _lower.where(outside, x, (self._lims[0] - 0.5) * _lower.ones_like(x))
        log_norm = cut.expm1().abs().log() - cut.abs().log()
        taylor = 0.5 * x + x.pow(2) / 24.0 - x.pow(4) / 2880.0
        return _lower.where(outside, log_norm, taylor)
