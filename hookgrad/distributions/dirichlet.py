"""`Dirichlet`. Mirrors: ``torch.distributions.dirichlet``."""

from __future__ import annotations

from typing import Any

from hookgrad._dtypes import Size
from hookgrad._functional.random_gamma import _dirichlet_grad, _sample_dirichlet
from hookgrad._tensor import Tensor
from hookgrad.autograd.function import Function, once_differentiable
from hookgrad.distributions import _lower, constraints
from hookgrad.distributions.distribution import Distribution
from hookgrad.distributions.exp_family import ExponentialFamily

__all__ = ["Dirichlet"]


def _dirichlet_backward(x: Tensor, concentration: Tensor, grad_output: Tensor) -> Tensor:
    total = concentration.sum(-1, True).expand_as(concentration)
    grad = _dirichlet_grad(x, concentration, total)
    return grad * (grad_output - (x * grad_output).sum(-1, True))


class _Dirichlet(Function):
    """The reparametrised Dirichlet draw: ATen's sampler forward, ATen's approximate
    ``d x / d alpha`` backward (node ``_DirichletBackward``, as PyTorch's)."""

    @staticmethod
    def forward(ctx: Any, concentration: Tensor) -> Tensor:
        x = _sample_dirichlet(concentration)
        ctx.save_for_backward(x, concentration)
        return x

    @staticmethod
    @once_differentiable
    def backward(ctx: Any, grad_output: Tensor) -> Tensor:
        x, concentration = ctx.saved_tensors
        return _dirichlet_backward(x, concentration, grad_output)


class Dirichlet(ExponentialFamily):
    """Distribution on the simplex with `concentration` (last dim: categories).

    Mirrors: ``torch.distributions.Dirichlet`` (``rsample`` draws and differentiates as
    PyTorch's ``_Dirichlet`` function: same samples, same approximate gradient).
    """

    arg_constraints = {"concentration": constraints.independent(constraints.positive, 1)}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, concentration: Tensor, validate_args: bool | None = None) -> None:
        if concentration.dim() < 1:
            raise ValueError("`concentration` parameter must be at least one-dimensional.")
        self.concentration = concentration
        super().__init__(concentration.shape[:-1], concentration.shape[-1:],
                         validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Dirichlet:
        new = self._get_checked_instance(Dirichlet, _instance)
        batch_shape = Size(batch_shape)
        new.concentration = self.concentration.expand(tuple(batch_shape) + tuple(
            self.event_shape))
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        return _Dirichlet.apply(self.concentration.expand(shape))

    def log_prob(self, value: Tensor) -> Tensor:
        from hookgrad._surface.math_ops import xlogy
        if self._validate_args:
            self._validate_sample(value)
        c = self.concentration
        return xlogy(c - 1.0, value).sum(-1) + c.sum(-1).lgamma() - c.lgamma().sum(-1)

    @property
    def mean(self) -> Tensor:
        return self.concentration / self.concentration.sum(-1, True)

    @property
    def mode(self) -> Tensor:
        cm1 = (self.concentration - 1).clamp(min=0.0)
        mode = cm1 / cm1.sum(-1, True)
        mask = (self.concentration < 1).all(dim=-1)
        if bool(mask.any()):
            mode = mode.clone()
            mode[mask] = _lower.functional.one_hot(mode[mask].argmax(dim=-1),
                                                    cm1.shape[-1]).to(mode)
        return mode

    @property
    def variance(self) -> Tensor:
        c = self.concentration
        con0 = c.sum(-1, True)
        return c * (con0 - c) / (con0.pow(2) * (con0 + 1))

    def entropy(self) -> Tensor:
        c = self.concentration
        k = c.size(-1)
        a0 = c.sum(-1)
        return (c.lgamma().sum(-1) - a0.lgamma() - (k - a0) * a0.digamma()
                - ((c - 1.0) * c.digamma()).sum(-1))

    @property
    def _natural_params(self) -> tuple:
        return (self.concentration,)

    def _log_normalizer(self, x: Tensor) -> Tensor:
        return x.lgamma().sum(-1) - x.sum(-1).lgamma()

