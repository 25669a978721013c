"""Shared pieces of the two-parameter location/scale distributions (Uniform, Laplace, Cauchy,
Gumbel...): construction, ``expand`` and the samples PyTorch draws for them."""

from __future__ import annotations

from typing import Any

from hookgrad._dtypes import Size
from hookgrad._tensor import Tensor
from hookgrad.autograd.grad_mode import no_grad
from hookgrad.distributions.distribution import Distribution, broadcast_all, expand_params

__all__ = ["ParamDistribution"]


class ParamDistribution(Distribution):
    """A distribution whose parameters are broadcast tensors named by `_params`."""

    _params: tuple = ()

    def _set_params(self, values: tuple, validate_args: bool | None) -> None:
        tensors = broadcast_all(*values)
        for name, value in zip(self._params, tensors):
            setattr(self, name, value)
        # all-Python-number parameters give an empty batch shape, as in PyTorch
        Distribution.__init__(self, tensors[0].size(), validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Any:
        return expand_params(self, type(self), batch_shape, _instance, self._params)

    def _draw(self, sample_shape: Any, fill: str, *args: Any) -> Tensor:
        """A fresh tensor of the sample shape filled in place by ``Tensor.<fill>_``."""
        shape = self._extended_shape(sample_shape)
        first = getattr(self, self._params[0])
        with no_grad():
            return getattr(first.new_empty(shape), fill + "_")(*args)


