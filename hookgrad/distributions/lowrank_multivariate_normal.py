"""`LowRankMultivariateNormal`: covariance ``W @ W.T + diag(D)``.

Mirrors: ``torch.distributions.lowrank_multivariate_normal``.
"""

from __future__ import annotations

import math
from typing import Any

from hookgrad._dtypes import Size
from hookgrad._tensor import Tensor
from hookgrad.distributions import _lower, constraints
from hookgrad.distributions.distribution import Distribution, lazy_property
from hookgrad.distributions.multivariate_normal import (_batch_mahalanobis, _batch_mv,
                                                        _solve_lower)

__all__ = ["LowRankMultivariateNormal"]


def _plus_identity(k: Tensor) -> Tensor:
    n = k.shape[-1]
    return k + _lower.eye(n, dtype=k.dtype, device=k.device)


def _batch_capacitance_tril(w: Tensor, d: Tensor) -> Tensor:
    """The Cholesky factor of the capacitance ``I + W.T @ D^-1 @ W`` (m x m, m = rank)."""
    wt_dinv = w.mT / d.unsqueeze(-2)
    return _lower.linalg.cholesky(_plus_identity(wt_dinv @ w))


def _batch_lowrank_logdet(w: Tensor, d: Tensor, capacitance_tril: Tensor) -> Tensor:
    """``log det(W @ W.T + D)`` by the matrix determinant lemma."""
    return (2 * capacitance_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)
            + d.log().sum(-1))


def _batch_lowrank_mahalanobis(w: Tensor, d: Tensor, x: Tensor,
                               capacitance_tril: Tensor) -> Tensor:
    """``x.T @ (W @ W.T + D)^-1 @ x`` by the Woodbury identity."""
    wt_dinv = w.mT / d.unsqueeze(-2)
    wt_dinv_x = _batch_mv(wt_dinv, x)
    return (x.pow(2) / d).sum(-1) - _batch_mahalanobis(capacitance_tril, wt_dinv_x)


class LowRankMultivariateNormal(Distribution):
    """Gaussian vectors with mean `loc` and covariance ``cov_factor @ cov_factor.T +
    diag(cov_diag)``; costs grow with the rank, not the event size.

    Mirrors: ``torch.distributions.LowRankMultivariateNormal``.
    """

    arg_constraints = {"loc": constraints.real_vector,
                       "cov_factor": constraints.independent(constraints.real, 2),
                       "cov_diag": constraints.independent(constraints.positive, 1)}
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, loc: Tensor, cov_factor: Tensor, cov_diag: Tensor,
                 validate_args: bool | None = None) -> None:
        if loc.dim() < 1:
            raise ValueError("loc must be at least one-dimensional.")
        event_shape = loc.shape[-1:]
        if cov_factor.dim() < 2:
            raise ValueError("cov_factor must be at least two-dimensional, with optional "
                             "leading batch dimensions")
        if tuple(cov_factor.shape[-2:-1]) != tuple(event_shape):
            raise ValueError(
                f"cov_factor must be a batch of matrices with shape {event_shape[0]} x m")
        if tuple(cov_diag.shape[-1:]) != tuple(event_shape):
            raise ValueError(f"cov_diag must be a batch of vectors with shape {event_shape}")
        loc_, cov_diag_ = loc.unsqueeze(-1), cov_diag.unsqueeze(-1)
        try:
            shape = _lower.broadcast_shapes(tuple(loc_.shape), tuple(cov_factor.shape),
                                            tuple(cov_diag_.shape))
        except RuntimeError as e:
            raise ValueError(f"Incompatible batch shapes: loc {loc.shape}, cov_factor "
                             f"{cov_factor.shape}, cov_diag {cov_diag.shape}") from e
        shape = tuple(shape)
        self.cov_factor = cov_factor.expand(shape)
        self.loc = loc_.expand(shape)[..., 0]
        self.cov_diag = cov_diag_.expand(shape)[..., 0]
        self._unbroadcasted_cov_factor = cov_factor
        self._unbroadcasted_cov_diag = cov_diag
        self._capacitance_tril = _batch_capacitance_tril(cov_factor, cov_diag)
        super().__init__(self.loc.shape[:-1], event_shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> LowRankMultivariateNormal:
        new = self._get_checked_instance(LowRankMultivariateNormal, _instance)
        batch_shape = Size(batch_shape)
        loc_shape = tuple(batch_shape) + tuple(self.event_shape)
        new.loc = self.loc.expand(loc_shape)
        new.cov_diag = self.cov_diag.expand(loc_shape)
        new.cov_factor = self.cov_factor.expand(loc_shape + tuple(self.cov_factor.shape[-1:]))
        new._unbroadcasted_cov_factor = self._unbroadcasted_cov_factor
        new._unbroadcasted_cov_diag = self._unbroadcasted_cov_diag
        new._capacitance_tril = self._capacitance_tril
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _matrix_shape(self) -> tuple:
        return tuple(self._batch_shape) + tuple(self._event_shape) * 2

    @property
    def mean(self) -> Tensor:
        return self.loc

    @property
    def mode(self) -> Tensor:
        return self.loc

    @lazy_property
    def variance(self) -> Tensor:
        return (self._unbroadcasted_cov_factor.pow(2).sum(-1)
                + self._unbroadcasted_cov_diag).expand(
            tuple(self._batch_shape) + tuple(self._event_shape))

    @lazy_property
    def scale_tril(self) -> Tensor:
        # D^(1/2) @ chol(I + D^(-1/2) W W.T D^(-1/2)): better conditioned than chol(cov)
        diag_sqrt = self._unbroadcasted_cov_diag.sqrt().unsqueeze(-1)
        scaled_w = self._unbroadcasted_cov_factor / diag_sqrt
        k = _plus_identity(scaled_w @ scaled_w.mT)
        return (diag_sqrt * _lower.linalg.cholesky(k)).expand(self._matrix_shape())

    @lazy_property
    def covariance_matrix(self) -> Tensor:
        w = self._unbroadcasted_cov_factor
        return (w @ w.mT + self._unbroadcasted_cov_diag.diag_embed()).expand(
            self._matrix_shape())

    @lazy_property
    def precision_matrix(self) -> Tensor:
        # Woodbury: D^-1 - D^-1 W (I + W.T D^-1 W)^-1 W.T D^-1
        wt_dinv = self._unbroadcasted_cov_factor.mT / self._unbroadcasted_cov_diag.unsqueeze(-2)
        a = _solve_lower(self._capacitance_tril, wt_dinv)
        precision = self._unbroadcasted_cov_diag.reciprocal().diag_embed() - a.mT @ a
        return precision.expand(self._matrix_shape())

    def rsample(self, sample_shape: Any = Size()) -> Tensor:
        shape = tuple(self._extended_shape(sample_shape))
        w_shape = shape[:-1] + tuple(self.cov_factor.shape[-1:])
        eps_w = _lower.randn(tuple(w_shape), dtype=self.loc.dtype, device=self.loc.device)
        eps_d = _lower.randn(tuple(shape), dtype=self.loc.dtype, device=self.loc.device)
        return (self.loc + _batch_mv(self._unbroadcasted_cov_factor, eps_w)
                + self._unbroadcasted_cov_diag.sqrt() * eps_d)

    def _log_det(self) -> Tensor:
        return _batch_lowrank_logdet(self._unbroadcasted_cov_factor,
                                     self._unbroadcasted_cov_diag, self._capacitance_tril)

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        m = _batch_lowrank_mahalanobis(self._unbroadcasted_cov_factor,
                                       self._unbroadcasted_cov_diag, value - self.loc,
                                       self._capacitance_tril)
        return -0.5 * (self._event_shape[0] * math.log(2 * math.pi) + self._log_det() + m)

    def entropy(self) -> Tensor:
        h = 0.5 * (self._event_shape[0] * (1.0 + math.log(2 * math.pi)) + self._log_det())
        return h if len(self._batch_shape) == 0 else h.expand(self._batch_shape)
