"""`MultivariateNormal`, parametrised by a covariance, a precision or a Cholesky factor.

Mirrors: ``torch.distributions.multivariate_normal``.
"""

from __future__ import annotations

import math
from typing import Any

from hookgrad._dtypes import Size
from hookgrad._tensor import Tensor
from hookgrad.distributions import constraints
from hookgrad.distributions.distribution import Distribution, lazy_property
from hookgrad.distributions import _lower

__all__ = ["MultivariateNormal"]



def _solve_lower(lower: Tensor, rhs: Tensor) -> Tensor:
    """``lower^-1 @ rhs`` for lower-triangular `lower`."""
    linalg = _lower.linalg
    if hasattr(linalg, "solve_triangular"):
        return linalg.solve_triangular(lower, rhs, upper=False)
    return linalg.solve(lower, rhs)


def _batch_mv(bmat: Tensor, bvec: Tensor) -> Tensor:
    return (bmat @ bvec.unsqueeze(-1)).squeeze(-1)


def _batch_mahalanobis(bL: Tensor, bx: Tensor) -> Tensor:  # noqa: N803 - PyTorch's names
    """``|L^-1 x|^2`` over batches, where `bL`'s batch shape may be smaller than `bx`'s."""
    n = bx.size(-1)
    bx_batch_shape = tuple(bx.shape[:-1])
    bl_dims = bL.dim() - 2
    outer = len(bx_batch_shape) - bl_dims
    old_dims = outer + bl_dims
    new_dims = outer + 2 * bl_dims
    new_shape = tuple(bx.shape[:outer])
    for s_l, s_x in zip(bL.shape[:-2], bx.shape[outer:-1]):
        new_shape += (s_x // s_l, s_l)
    bx = bx.reshape(new_shape + (n,))
    perm = (list(range(outer)) + list(range(outer, new_dims, 2))
            + list(range(outer + 1, new_dims, 2)) + [new_dims])
    bx = bx.permute(perm)
    flat_l = bL.reshape(-1, n, n)
    flat_x = bx.reshape(-1, flat_l.size(0), n)
    m_swap = _solve_lower(flat_l, flat_x.permute(1, 2, 0)).pow(2).sum(-2)
    permuted = m_swap.t().reshape(tuple(bx.shape[:-1]))
    inv = list(range(outer))
    for i in range(bl_dims):
        inv += [outer + i, old_dims + i]
    return permuted.permute(inv).reshape(bx_batch_shape)


def _precision_to_scale_tril(p: Tensor) -> Tensor:
    hg = _lower
    lf = hg.linalg.cholesky(hg.flip(p, (-2, -1)))
    l_inv = hg.transpose(hg.flip(lf, (-2, -1)), -2, -1)
    eye = hg.eye(p.shape[-1], dtype=p.dtype, device=p.device)
    return _solve_lower(l_inv, eye)


class MultivariateNormal(Distribution):
    """Gaussian vectors with mean `loc`; exactly one of `covariance_matrix`,
    `precision_matrix` or `scale_tril` (its lower Cholesky factor).

    Mirrors: ``torch.distributions.MultivariateNormal``.
    """

    arg_constraints = {"loc": constraints.real_vector,
                       "covariance_matrix": constraints.positive_definite,
                       "precision_matrix": constraints.positive_definite,
                       "scale_tril": constraints.lower_cholesky}
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, loc: Tensor, covariance_matrix: Tensor | None = None,
                 precision_matrix: Tensor | None = None, scale_tril: Tensor | None = None,
                 validate_args: bool | None = None) -> None:
        if loc.dim() < 1:
            raise ValueError("loc must be at least one-dimensional.")
        given = [m is not None for m in (covariance_matrix, scale_tril, precision_matrix)]
        if sum(given) != 1:
            raise ValueError("Exactly one of covariance_matrix or precision_matrix or "
                             "scale_tril may be specified.")
        for name, matrix in (("scale_tril", scale_tril), ("covariance_matrix", covariance_matrix),
                             ("precision_matrix", precision_matrix)):
            if matrix is None:
                continue
            if matrix.dim() < 2:
                raise ValueError(f"{name} matrix must be at least two-dimensional, with "
                                 "optional leading batch dimensions")
            batch_shape = _lower.broadcast_shapes(tuple(matrix.shape[:-2]), tuple(loc.shape[:-1]))
            setattr(self, name, matrix.expand(tuple(batch_shape) + (-1, -1)))
        self.loc = loc.expand(tuple(batch_shape) + (-1,))
        super().__init__(Size(batch_shape), self.loc.shape[-1:], validate_args=validate_args)
        if scale_tril is not None:
            self._unbroadcasted_scale_tril = scale_tril
        elif covariance_matrix is not None:
            self._unbroadcasted_scale_tril = _lower.linalg.cholesky(covariance_matrix)
        else:
            self._unbroadcasted_scale_tril = _precision_to_scale_tril(precision_matrix)

    def expand(self, batch_shape: Any, _instance: Any = None) -> MultivariateNormal:
        new = self._get_checked_instance(MultivariateNormal, _instance)
        batch_shape = Size(batch_shape)
        loc_shape = tuple(batch_shape) + tuple(self.event_shape)
        cov_shape = loc_shape + tuple(self.event_shape)
        new.loc = self.loc.expand(loc_shape)
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril
        for name in ("covariance_matrix", "scale_tril", "precision_matrix"):
            if name in self.__dict__:
                setattr(new, name, self.__dict__[name].expand(cov_shape))
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _matrix_shape(self) -> tuple:
        return tuple(self._batch_shape) + tuple(self._event_shape) * 2

    @lazy_property
    def scale_tril(self) -> Tensor:
        return self._unbroadcasted_scale_tril.expand(self._matrix_shape())

    @lazy_property
    def covariance_matrix(self) -> Tensor:
        lower = self._unbroadcasted_scale_tril
        return (lower @ lower.mT).expand(self._matrix_shape())

    @lazy_property
    def precision_matrix(self) -> Tensor:
        hg = _lower
        lower = self._unbroadcasted_scale_tril
        if hasattr(hg, "cholesky_inverse"):
            return hg.cholesky_inverse(lower).expand(self._matrix_shape())
        return hg.linalg.inv(lower @ lower.mT).expand(self._matrix_shape())

    @property
    def mean(self) -> Tensor:
        return self.loc

    @property
    def mode(self) -> Tensor:
        return self.loc

    @property
    def variance(self) -> Tensor:
        return self._unbroadcasted_scale_tril.pow(2).sum(-1).expand(
            tuple(self._batch_shape) + tuple(self._event_shape))

    def rsample(self, sample_shape: Any = Size()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        eps = _lower.randn(tuple(shape), dtype=self.loc.dtype, device=self.loc.device)
        return self.loc + _batch_mv(self._unbroadcasted_scale_tril, eps)

    def _half_log_det(self) -> Tensor:
        return self._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        diff = value - self.loc
        m = _batch_mahalanobis(self._unbroadcasted_scale_tril, diff)
        return -0.5 * (self._event_shape[0] * math.log(2 * math.pi) + m) - self._half_log_det()

    def entropy(self) -> Tensor:
        h = 0.5 * self._event_shape[0] * (1.0 + math.log(2 * math.pi)) + self._half_log_det()
        return h if len(self._batch_shape) == 0 else h.expand(self._batch_shape)
