"""`Categorical`: a distribution over ``0 .. K-1``. Mirrors: ``torch.distributions.categorical``."""

from __future__ import annotations

from math import prod
from typing import Any

from hookgrad._dtypes import Size, finfo, int64
from hookgrad._functional import creation as _creation
from hookgrad._functional import random as _random
from hookgrad._ops._shapes import broadcast_shapes
from hookgrad._tensor import Tensor
from hookgrad.autograd.grad_mode import no_grad
from hookgrad.distributions import constraints
from hookgrad.distributions.distribution import Distribution, lazy_property

__all__ = ["Categorical", "probs_to_logits", "logits_to_probs", "clamp_probs"]


def clamp_probs(probs: Tensor) -> Tensor:
    """Clamp into ``[eps, 1 - eps]``. Mirrors: ``torch.distributions.utils.clamp_probs``."""
    eps = finfo(probs.dtype).eps
    return probs.clamp(min=eps, max=1 - eps)


def probs_to_logits(probs: Tensor, is_binary: bool = False) -> Tensor:
    """Mirrors: ``torch.distributions.utils.probs_to_logits``."""
    ps = clamp_probs(probs)
    return ps.log() - (-ps).log1p() if is_binary else ps.log()


def logits_to_probs(logits: Tensor, is_binary: bool = False) -> Tensor:
    """Mirrors: ``torch.distributions.utils.logits_to_probs``."""
    return logits.sigmoid() if is_binary else logits.softmax(-1)


class Categorical(Distribution):
    """Draws an index with probabilities `probs` (normalised) or `logits` (log-odds).

    Example:
        >>> import hookgrad as torch
        >>> d = torch.distributions.Categorical(probs=torch.tensor([0.25, 0.75]))
        >>> d.log_prob(torch.tensor(1)), d.entropy()
        (tensor(-0.2877), tensor(0.5623))

    Mirrors: ``torch.distributions.Categorical``.
    """

    arg_constraints = {"probs": constraints.simplex,
                       "logits": constraints.independent(constraints.real, 1)}
    has_enumerate_support = True

    def __init__(self, probs: Tensor | None = None, logits: Tensor | None = None,
                 validate_args: bool | None = None) -> None:
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            if probs.dim() < 1:
                raise ValueError("`probs` parameter must be at least one-dimensional.")
            self.probs = probs / probs.sum(-1, keepdim=True)
        else:
            assert logits is not None
            if logits.dim() < 1:
                raise ValueError("`logits` parameter must be at least one-dimensional.")
            self.logits = logits - logits.logsumexp(dim=-1, keepdim=True)
        self._param = self.probs if probs is not None else self.logits
        self._num_events = self._param.size()[-1]
        batch_shape = self._param.size()[:-1] if self._param.ndimension() > 1 else Size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Categorical:
        new = self._get_checked_instance(Categorical, _instance)
        batch_shape = Size(batch_shape)
        param_shape = tuple(batch_shape) + (self._num_events,)
        for name in ("probs", "logits"):
            if name in self.__dict__:
                setattr(new, name, self.__dict__[name].expand(param_shape))
                new._param = new.__dict__[name]
        new._num_events = self._num_events
        Distribution.__init__(new, batch_shape, self._event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self) -> constraints.Constraint:  # type: ignore[override]
        return constraints.integer_interval(0, self._num_events - 1)

    @lazy_property
    def logits(self) -> Tensor:
        return probs_to_logits(self.probs)

    @lazy_property
    def probs(self) -> Tensor:
        return logits_to_probs(self.logits)

    @property
    def param_shape(self) -> Size:
        return self._param.size()

    def _new(self, *args: Any, **kwargs: Any) -> Tensor:
        return self._param.new(*args, **kwargs)

    @property
    def mean(self) -> Tensor:
        return _creation.full(self._extended_shape(), float("nan"), dtype=self.probs.dtype)

    @property
    def mode(self) -> Tensor:
        return self.probs.argmax(dim=-1)

    @property
    def variance(self) -> Tensor:
        return _creation.full(self._extended_shape(), float("nan"), dtype=self.probs.dtype)

    def sample(self, sample_shape: Any = Size()) -> Tensor:
        sample_shape = Size(sample_shape)
        with no_grad():
            probs_2d = self.probs.reshape(-1, self._num_events)
            samples_2d = _random.multinomial(probs_2d, prod(sample_shape), True).T
            return samples_2d.reshape(self._extended_shape(sample_shape))

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        index = value.long().unsqueeze(-1)
        shape = broadcast_shapes(tuple(index.shape), tuple(self.logits.shape))
        log_pmf = self.logits.expand(shape)
        index = index.expand(shape)[..., :1]
        return log_pmf.gather(-1, index).squeeze(-1)

    def entropy(self) -> Tensor:
        min_real = finfo(self.logits.dtype).min
        logits = self.logits.clamp(min=min_real)
        p_log_p = logits * self.probs
        return -p_log_p.sum(-1)

    def enumerate_support(self, expand: bool = True) -> Tensor:
        values = _creation.arange(self._num_events, dtype=int64)
        values = values.view((-1,) + (1,) * len(self._batch_shape))
        if expand:
            values = values.expand((-1,) + tuple(self._batch_shape))
        return values
