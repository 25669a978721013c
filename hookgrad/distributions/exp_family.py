"""`ExponentialFamily`: distributions with density ``h(x) exp(<t(x), θ> - F(θ))``.

Mirrors: ``torch.distributions.exp_family``.
"""

from __future__ import annotations

from typing import Any

from hookgrad._tensor import Tensor
from hookgrad.distributions.distribution import Distribution

__all__ = ["ExponentialFamily"]


class ExponentialFamily(Distribution):
    """Subclasses give `_natural_params`, `_log_normalizer` and `_mean_carrier_measure`; the
    entropy then follows from the Bregman divergence of the log-normalizer (by autograd).

    Mirrors: ``torch.distributions.ExponentialFamily``.
    """

    @property
    def _natural_params(self) -> tuple:
        raise NotImplementedError

    def _log_normalizer(self, *natural_params: Any) -> Tensor:
        raise NotImplementedError

    @property
    def _mean_carrier_measure(self) -> Any:
        raise NotImplementedError

    def entropy(self) -> Tensor:
        from hookgrad.autograd import grad
        result = -self._mean_carrier_measure
        nparams = [p.detach().requires_grad_() for p in self._natural_params]
        lg_normal = self._log_normalizer(*nparams)
        gradients = grad(lg_normal.sum(), nparams, create_graph=True)
        result = result + lg_normal
        for param, g in zip(nparams, gradients):
            result = result - (param * g).reshape(tuple(self._batch_shape) + (-1,)).sum(-1)
        return result
