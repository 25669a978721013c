"""`LKJCholesky`: a prior over Cholesky factors of correlation matrices.

Mirrors: ``torch.distributions.lkj_cholesky``.
"""

from __future__ import annotations

import math
from typing import Any

from hookgrad._dtypes import Size
from hookgrad._tensor import Tensor
from hookgrad.distributions import _lower, constraints
from hookgrad.distributions.beta import Beta
from hookgrad.distributions.distribution import Distribution, broadcast_all

__all__ = ["LKJCholesky"]


class LKJCholesky(Distribution):
    """The LKJ distribution (Lewandowski, Kurowicka & Joe, 2009) on the lower Cholesky
    factor of a `dim` x `dim` correlation matrix: density proportional to
    ``det(L @ L.T) ** (concentration - 1)``.

    Mirrors: ``torch.distributions.LKJCholesky``.
    """

    arg_constraints = {"concentration": constraints.positive}
    support = constraints.corr_cholesky

    def __init__(self, dim: int, concentration: Any = 1.0,
                 validate_args: bool | None = None) -> None:
        if dim < 2:
            raise ValueError(
                f"Expected dim to be an integer greater than or equal to 2. Found dim={dim}.")
        self.dim = dim
        (self.concentration,) = broadcast_all(concentration)
        # the onion method draws the squared norm of row i's off-diagonal part from a Beta
        marginal_conc = self.concentration + 0.5 * (self.dim - 2)
        offset = _lower.arange(self.dim - 1, dtype=self.concentration.dtype,
                               device=self.concentration.device)
        offset = _lower.cat([offset.new_zeros((1,)), offset])
        self._beta = Beta(offset + 0.5, marginal_conc.unsqueeze(-1) - 0.5 * offset)
        super().__init__(self.concentration.size(), Size((dim, dim)), validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> LKJCholesky:
        new = self._get_checked_instance(LKJCholesky, _instance)
        batch_shape = Size(batch_shape)
        new.dim = self.dim
        new.concentration = self.concentration.expand(batch_shape)
        new._beta = self._beta.expand(tuple(batch_shape) + (self.dim,))
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def sample(self, sample_shape: Any = Size()) -> Tensor:
        # the onion method, vectorised over rows: row i is sqrt(y_i) times a uniform direction
        # in its first i coordinates, and the diagonal completes it to unit norm
        y = self._beta.sample(sample_shape).unsqueeze(-1)
        shape = self._extended_shape(sample_shape)
        u_normal = _lower.randn(tuple(shape), dtype=y.dtype, device=y.device).tril(-1)
        u_hypersphere = u_normal / u_normal.norm(dim=-1, keepdim=True)
        u_hypersphere[..., 0, :].fill_(0.0)  # the first row is 0/0
        w = y.sqrt() * u_hypersphere
        tiny = _lower.finfo(w.dtype).tiny
        diag = (1 - (w ** 2).sum(dim=-1)).clamp(min=tiny).sqrt()
        return w + diag.diag_embed()

    def log_prob(self, value: Tensor) -> Tensor:
        # with the Jacobian from factor to correlation matrix, the density of L is
        # prod_i L_ii ** (2 * concentration - 2 + D - i) over the normaliser of [LKJ 2009]
        if self._validate_args:
            self._validate_sample(value)
        diag = value.diagonal(dim1=-1, dim2=-2)[..., 1:]
        order = _lower.arange(2, self.dim + 1, device=self.concentration.device)
        order = 2 * (self.concentration - 1).unsqueeze(-1) + self.dim - order
        unnormalized = (order * diag.log()).sum(dim=-1)
        dm1 = self.dim - 1
        alpha = self.concentration + 0.5 * dm1
        denominator = alpha.lgamma() * dm1
        numerator = (alpha - 0.5).mvlgamma(dm1)
        # the paper's pi term is D(D-1)/4 log(pi); mvlgamma holds (D-1)(D-2)/4 log(pi)
        pi_constant = 0.5 * dm1 * math.log(math.pi)
        return unnormalized - (pi_constant + numerator - denominator)
