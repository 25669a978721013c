"""`Wishart`: positive-definite matrices, parametrised like `MultivariateNormal`.

Mirrors: ``torch.distributions.wishart``.
"""

from __future__ import annotations

import math
import numbers
import warnings
from typing import Any

from hookgrad._dtypes import Size
from hookgrad._functional.einsum import einsum
from hookgrad._surface.shape_ops import tril_indices
from hookgrad._tensor import Tensor
from hookgrad.distributions import _lower, constraints
from hookgrad.distributions.chi2 import Chi2
from hookgrad.distributions.distribution import Distribution, lazy_property
from hookgrad.distributions.exp_family import ExponentialFamily
from hookgrad.distributions.multivariate_normal import _precision_to_scale_tril

__all__ = ["Wishart"]

_LOG_2 = math.log(2)


def _mvdigamma(x: Tensor, p: int) -> Tensor:
    """The multivariate digamma: ``sum_i digamma(x - i/2)`` for ``i < p``."""
    if not bool(x.gt((p - 1) / 2).all()):
        raise AssertionError("Wrong domain for multivariate digamma function.")
    halves = _lower.arange(p, dtype=x.dtype, device=x.device).div(2)
    return (x.unsqueeze(-1) - halves.expand(tuple(x.shape) + (-1,))).digamma().sum(-1)


def _clamp_above_eps(x: Tensor) -> Tensor:
    return x.clamp(min=_lower.finfo(x.dtype).eps)  # x is assumed positive


class Wishart(ExponentialFamily):
    """Scatter matrices of `df` Gaussian vectors with the given covariance: exactly one of
    `covariance_matrix`, `precision_matrix` or `scale_tril`.

    Mirrors: ``torch.distributions.Wishart``.
    """

    support = constraints.positive_definite
    has_rsample = True
    _mean_carrier_measure = 0

    @property
    def arg_constraints(self) -> dict:
        return {"covariance_matrix": constraints.positive_definite,
                "precision_matrix": constraints.positive_definite,
                "scale_tril": constraints.lower_cholesky,
                "df": constraints.greater_than(self.event_shape[-1] - 1)}

    def __init__(self, df: Any, covariance_matrix: Tensor | None = None,
                 precision_matrix: Tensor | None = None, scale_tril: Tensor | None = None,
                 validate_args: bool | None = None) -> None:
        given = [m for m in (covariance_matrix, precision_matrix, scale_tril) if m is not None]
        if len(given) != 1:
            raise AssertionError("Exactly one of covariance_matrix or precision_matrix or "
                                 "scale_tril may be specified.")
        param = given[0]
        if param.dim() < 2:
            raise ValueError("scale_tril must be at least two-dimensional, with optional "
                             "leading batch dimensions")
        if isinstance(df, numbers.Number):
            batch_shape = Size(param.shape[:-2])
            self.df = _lower.as_tensor(df, dtype=param.dtype, device=param.device)
        else:
            batch_shape = Size(_lower.broadcast_shapes(tuple(param.shape[:-2]),
                                                       tuple(df.shape)))
            self.df = df.expand(batch_shape)
        event_shape = param.shape[-2:]
        p = event_shape[-1]
        if bool(self.df.le(p - 1).any()):
            raise ValueError(f"Value of df={df} expected to be greater than ndim - 1 = {p - 1}.")
        for name, matrix in (("scale_tril", scale_tril), ("covariance_matrix", covariance_matrix),
                             ("precision_matrix", precision_matrix)):
            if matrix is not None:
                setattr(self, name, param.expand(tuple(batch_shape) + (-1, -1)))
        if bool(self.df.lt(p).any()):
            warnings.warn("Low df values detected. Singular samples are highly likely to occur "
                          "for ndim - 1 < df < ndim.", stacklevel=2)
        super().__init__(batch_shape, event_shape, validate_args=validate_args)
        self._batch_dims = [-(x + 1) for x in range(len(self._batch_shape))]
        if scale_tril is not None:
            self._unbroadcasted_scale_tril = scale_tril
        elif covariance_matrix is not None:
            self._unbroadcasted_scale_tril = _lower.linalg.cholesky(covariance_matrix)
        else:
            self._unbroadcasted_scale_tril = _precision_to_scale_tril(precision_matrix)
        self._dist_chi2 = self._bartlett_chi2(batch_shape)

    def _bartlett_chi2(self, batch_shape: Size) -> Chi2:
        """The squared diagonal of the Bartlett factor: Chi2(df - i) in row i."""
        lower = self._unbroadcasted_scale_tril
        rows = _lower.arange(self._event_shape[-1], dtype=lower.dtype, device=lower.device)
        return Chi2(df=self.df.unsqueeze(-1) - rows.expand(tuple(batch_shape) + (-1,)))

    def expand(self, batch_shape: Any, _instance: Any = None) -> Wishart:
        new = self._get_checked_instance(Wishart, _instance)
        batch_shape = Size(batch_shape)
        cov_shape = tuple(batch_shape) + tuple(self.event_shape)
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril.expand(cov_shape)
        new.df = self.df.expand(batch_shape)
        new._batch_dims = [-(x + 1) for x in range(len(batch_shape))]
        for name in ("covariance_matrix", "scale_tril", "precision_matrix"):
            if name in self.__dict__:
                setattr(new, name, self.__dict__[name].expand(cov_shape))
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._dist_chi2 = new._bartlett_chi2(batch_shape)
        new._validate_args = self._validate_args
        return new

    def _matrix_shape(self) -> tuple:
        return tuple(self._batch_shape) + tuple(self._event_shape)

    @lazy_property
    def scale_tril(self) -> Tensor:
        return self._unbroadcasted_scale_tril.expand(self._matrix_shape())

    @lazy_property
    def covariance_matrix(self) -> Tensor:
        lower = self._unbroadcasted_scale_tril
        return (lower @ lower.transpose(-2, -1)).expand(self._matrix_shape())

    @lazy_property
    def precision_matrix(self) -> Tensor:
        lower = self._unbroadcasted_scale_tril
        identity = _lower.eye(self._event_shape[-1], device=lower.device, dtype=lower.dtype)
        return identity.cholesky_solve(lower).expand(self._matrix_shape())

    def _df_matrix(self) -> Tensor:
        return self.df.view(tuple(self._batch_shape) + (1, 1))

    @property
    def mean(self) -> Tensor:
        return self._df_matrix() * self.covariance_matrix

    @property
    def mode(self) -> Tensor:
        factor = self.df - self.covariance_matrix.shape[-1] - 1
        factor[factor <= 0] = math.nan  # no mode unless df > p + 1
        return factor.view(tuple(self._batch_shape) + (1, 1)) * self.covariance_matrix

    @property
    def variance(self) -> Tensor:
        cov = self.covariance_matrix
        diag = cov.diagonal(dim1=-2, dim2=-1)
        return self._df_matrix() * (cov.pow(2) + einsum("...i,...j->...ij", diag, diag))

    def _bartlett_sampling(self, sample_shape: Any = Size()) -> Tensor:
        # Bartlett: A lower-triangular with sqrt(Chi2(df - i)) on the diagonal and standard
        # normals below it; then L A (L A)^T ~ Wishart(df, L L^T)
        p = self._event_shape[-1]
        noise = _clamp_above_eps(self._dist_chi2.rsample(sample_shape).sqrt()).diag_embed(
            dim1=-2, dim2=-1)
        i, j = tril_indices(p, p, offset=-1)
        noise[..., i, j] = _lower.randn(
            tuple(sample_shape) + tuple(self._batch_shape) + (p * (p - 1) // 2,),
            dtype=noise.dtype, device=noise.device)
        chol = self._unbroadcasted_scale_tril @ noise
        return chol @ chol.transpose(-2, -1)

    def _check_rows(self, sample: Tensor) -> Tensor:
        ok = self.support.check(sample)
        return ok.amax(self._batch_dims) if self._batch_shape else ok

    def rsample(self, sample_shape: Any = Size(), max_try_correction: Any = None) -> Tensor:
        if max_try_correction is None:
            max_try_correction = 10
        sample_shape = Size(sample_shape)
        sample = self._bartlett_sampling(sample_shape)
        # PyTorch's numerical-stability redraw. Its first mask holds the draws that pass the
        # support check (not the failing ones), so it warns and redraws whenever any passes;
        # kept as is so that warnings and redraw counts match PyTorch.
        redraw = self._check_rows(sample)
        if bool(redraw.any()):
            warnings.warn("Singular sample detected.", stacklevel=2)
            for _ in range(max_try_correction):
                fresh = self._bartlett_sampling(redraw[redraw].shape)
                sample[redraw] = fresh
                failed = ~self.support.check(fresh)
                if self._batch_shape:
                    failed = failed.amax(self._batch_dims)
                redraw[redraw.clone()] = failed
                if not bool(redraw.any()):
                    break
        return sample

    def _half_log_det_term(self) -> Tensor:
        p = self._event_shape[-1]
        diag = self._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1)
        return p * _LOG_2 / 2 + diag.log().sum(-1)

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        nu, p = self.df, self._event_shape[-1]
        trace = value.cholesky_solve(self._unbroadcasted_scale_tril).diagonal(
            dim1=-2, dim2=-1).sum(dim=-1)
        return (-nu * self._half_log_det_term() - (nu / 2).mvlgamma(p=p)
                + (nu - p - 1) / 2 * _lower.linalg.slogdet(value).logabsdet - trace / 2)

    def entropy(self) -> Tensor:
        nu, p = self.df, self._event_shape[-1]
        return ((p + 1) * self._half_log_det_term() + (nu / 2).mvlgamma(p=p)
                - (nu - p - 1) / 2 * _mvdigamma(nu / 2, p=p) + nu * p / 2)

    @property
    def _natural_params(self) -> tuple:
        p = self._event_shape[-1]
        return -self.precision_matrix / 2, (self.df - p - 1) / 2

    def _log_normalizer(self, x: Tensor, y: Tensor) -> Tensor:
        p = self._event_shape[-1]
        shifted = y + (p + 1) / 2
        return (shifted * (-_lower.linalg.slogdet(-2 * x).logabsdet + _LOG_2 * p)
                + shifted.mvlgamma(p=p))
