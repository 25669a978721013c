"""`VonMises`, the circular normal. Mirrors: ``torch.distributions.von_mises``."""

from __future__ import annotations

import math
from typing import Any

from hookgrad._dtypes import Size, float64
from hookgrad._tensor import Tensor
from hookgrad.autograd.grad_mode import no_grad
from hookgrad.distributions import _lower, constraints
from hookgrad.distributions.distribution import Distribution, broadcast_all, lazy_property

__all__ = ["VonMises"]


def _eval_poly(y: Tensor, coef: list) -> Tensor:
    """``sum(coef[i] * y**i)`` by Horner's rule."""
    result = coef[-1]
    for c in reversed(coef[:-1]):
        result = c + y * result
    return result


# polynomial approximations of I0 and I1 (Abramowitz & Stegun 9.8.1-9.8.4), the ones PyTorch
# uses: the "small" set in (x/3.75)^2 below 3.75, the "large" set in 3.75/x above it
_I0_SMALL = [1.0, 3.5156229, 3.0899424, 1.2067492, 0.2659732, 0.360768e-1, 0.45813e-2]
_I0_LARGE = [0.39894228, 0.1328592e-1, 0.225319e-2, -0.157565e-2, 0.916281e-2,
             -0.2057706e-1, 0.2635537e-1, -0.1647633e-1, 0.392377e-2]
_I1_SMALL = [0.5, 0.87890594, 0.51498869, 0.15084934, 0.2658733e-1, 0.301532e-2, 0.32411e-3]
_I1_LARGE = [0.39894228, -0.3988024e-1, -0.362018e-2, 0.163801e-2, -0.1031555e-1,
             0.2282967e-1, -0.2895312e-1, 0.1787654e-1, -0.420059e-2]
_SMALL = (_I0_SMALL, _I1_SMALL)
_LARGE = (_I0_LARGE, _I1_LARGE)


def _log_modified_bessel_fn(x: Tensor, order: int = 0) -> Tensor:
    """``log(I_order(x))`` for ``x > 0`` and `order` 0 or 1."""
    if order not in (0, 1):
        raise AssertionError(f"order must be 0 or 1, got {order}")
    y = x / 3.75
    small = _eval_poly(y * y, _SMALL[order])
    if order == 1:
        small = x.abs() * small
    large = x - 0.5 * x.log() + _eval_poly(3.75 / x, _LARGE[order]).log()
    return _lower.where(x < 3.75, small.log(), large)


def _rejection_sample(loc: Tensor, concentration: Tensor, proposal_r: Tensor,
                      x: Tensor) -> Tensor:
    """Best & Fisher (1979): wrapped-Cauchy proposals, accepted until every entry is done."""
    done = _lower.zeros_like(x).bool()
    while not bool(done.all()):
        u1, u2, u3 = _lower.rand((3,) + tuple(x.shape), dtype=loc.dtype,
                                 device=loc.device).unbind()
        z = (math.pi * u1).cos()
        f = (1 + proposal_r * z) / (proposal_r + z)
        c = concentration * (proposal_r - f)
        accept = ((c * (2 - c) - u2) > 0) | ((c / u2).log() + 1 - c >= 0)
        if bool(accept.any()):
            x = _lower.where(accept, (u3 - 0.5).sign() * f.acos(), x)
            done = done | accept
    return (x + math.pi + loc) % (2 * math.pi) - math.pi


class VonMises(Distribution):
    """Angles around `loc` with `concentration`; values are taken modulo ``2 pi``.

    Mirrors: ``torch.distributions.VonMises``.
    """

    arg_constraints = {"loc": constraints.real, "concentration": constraints.positive}
    support = constraints.real
    has_rsample = False

    def __init__(self, loc: Any, concentration: Any, validate_args: bool | None = None) -> None:
        self.loc, self.concentration = broadcast_all(loc, concentration)
        super().__init__(self.loc.shape, Size(), validate_args)

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return (self.concentration * (value - self.loc).cos() - math.log(2 * math.pi)
                - _log_modified_bessel_fn(self.concentration, order=0))

    @lazy_property
    def _loc(self) -> Tensor:
        return self.loc.to(float64)

    @lazy_property
    def _concentration(self) -> Tensor:
        return self.concentration.to(float64)

    @lazy_property
    def _proposal_r(self) -> Tensor:
        kappa = self._concentration
        tau = 1 + (1 + 4 * kappa ** 2).sqrt()
        rho = (tau - (2 * tau).sqrt()) / (2 * kappa)
        proposal_r = (1 + rho ** 2) / (2 * rho)
        # second-order Taylor expansion around 0 for tiny kappa
        return _lower.where(kappa < 1e-5, 1 / kappa + kappa, proposal_r)

    def sample(self, sample_shape: Any = Size()) -> Tensor:
        # always in double precision: small concentrations hang the loop in float32
        with no_grad():
            shape = self._extended_shape(sample_shape)
            x = self._loc.new_empty(shape)
            return _rejection_sample(self._loc, self._concentration, self._proposal_r,
                                     x).to(self.loc.dtype)

    def expand(self, batch_shape: Any, _instance: Any = None) -> VonMises:
        try:
            return super().expand(batch_shape)
        except NotImplementedError:
            validate_args = self.__dict__.get("_validate_args")
            return type(self)(self.loc.expand(batch_shape),
                              self.concentration.expand(batch_shape),
                              validate_args=validate_args)

    @property
    def mean(self) -> Tensor:
        """The circular mean."""
        return self.loc

    @property
    def mode(self) -> Tensor:
        return self.loc

    @lazy_property
    def variance(self) -> Tensor:
        """The circular variance, ``1 - I1(k) / I0(k)``."""
        return 1 - (_log_modified_bessel_fn(self.concentration, order=1)
                    - _log_modified_bessel_fn(self.concentration, order=0)).exp()
