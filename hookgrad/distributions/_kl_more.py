"""``kl_divergence`` rules for `LowRankMultivariateNormal` and `ContinuousBernoulli`,
registered into the table of `hookgrad.distributions.kl` when the package is imported.

Mirrors: the matching ``@register_kl`` rules of ``torch.distributions.kl``.
"""

from __future__ import annotations

import math

from hookgrad._tensor import Tensor
from hookgrad.distributions import _lower
from hookgrad.distributions.beta import Beta
from hookgrad.distributions.continuous_bernoulli import ContinuousBernoulli
from hookgrad.distributions.exponential import Exponential
from hookgrad.distributions.gamma import Gamma
from hookgrad.distributions.gumbel import Gumbel
from hookgrad.distributions.kl import register_kl
from hookgrad.distributions.laplace import Laplace
from hookgrad.distributions.lowrank_multivariate_normal import (LowRankMultivariateNormal,
                                                                _batch_lowrank_logdet,
                                                                _batch_lowrank_mahalanobis)
from hookgrad.distributions.multivariate_normal import (MultivariateNormal, _batch_mahalanobis,
                                                        _solve_lower)
from hookgrad.distributions.normal import Normal
from hookgrad.distributions.pareto import Pareto
from hookgrad.distributions.uniform import Uniform

__all__: list = []


def _infinite_like(tensor: Tensor) -> Tensor:
    return _lower.full_like(tensor, math.inf)


def _batch_trace_xxt(bmat: Tensor) -> Tensor:
    """``trace(X @ X.T)`` over arbitrary leading batch dims."""
    m, n = bmat.size(-2), bmat.size(-1)
    return bmat.reshape(-1, m * n).pow(2).sum(-1).reshape(bmat.shape[:-2])


def _check_event_shapes(p: object, q: object, what: str) -> None:
    if p.event_shape != q.event_shape:
        raise ValueError(f"KL-divergence between two {what} with different event shapes "
                         "cannot be computed")


def _lowrank_logdet(d: LowRankMultivariateNormal) -> Tensor:
    return _batch_lowrank_logdet(d._unbroadcasted_cov_factor, d._unbroadcasted_cov_diag,
                                 d._capacitance_tril)


def _woodbury_factor(q: LowRankMultivariateNormal) -> Tensor:
    """``A = C^-1 W.T D^-1`` with C q's capacitance factor, so ``cov_q^-1 = D^-1 - A.T A``."""
    wt_dinv = q._unbroadcasted_cov_factor.mT / q._unbroadcasted_cov_diag.unsqueeze(-2)
    return _solve_lower(q._capacitance_tril, wt_dinv)


def _lowrank_mahalanobis(q: LowRankMultivariateNormal, x: Tensor) -> Tensor:
    return _batch_lowrank_mahalanobis(q._unbroadcasted_cov_factor, q._unbroadcasted_cov_diag,
                                      x, q._capacitance_tril)


@register_kl(LowRankMultivariateNormal, LowRankMultivariateNormal)
def _kl_lowrank_lowrank(p: LowRankMultivariateNormal, q: LowRankMultivariateNormal) -> Tensor:
    _check_event_shapes(p, q, "Low Rank Multivariate Normals")
    term1 = _lowrank_logdet(q) - _lowrank_logdet(p)
    term3 = _lowrank_mahalanobis(q, q.loc - p.loc)
    a = _woodbury_factor(q)
    # trace(cov_q^-1 cov_p), with cov_p = W_p W_p.T + D_p, expanded term by term
    term21 = (p._unbroadcasted_cov_diag / q._unbroadcasted_cov_diag).sum(-1)
    term22 = _batch_trace_xxt(p._unbroadcasted_cov_factor
                              * q._unbroadcasted_cov_diag.rsqrt().unsqueeze(-1))
    term23 = _batch_trace_xxt(a * p._unbroadcasted_cov_diag.sqrt().unsqueeze(-2))
    term24 = _batch_trace_xxt(a.matmul(p._unbroadcasted_cov_factor))
    return 0.5 * (term1 + term21 + term22 - term23 - term24 + term3 - p.event_shape[0])


@register_kl(MultivariateNormal, LowRankMultivariateNormal)
def _kl_mvn_lowrank(p: MultivariateNormal, q: LowRankMultivariateNormal) -> Tensor:
    _check_event_shapes(p, q, "(Low Rank) Multivariate Normals")
    p_tril = p._unbroadcasted_scale_tril
    term1 = _lowrank_logdet(q) - 2 * p_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)
    term3 = _lowrank_mahalanobis(q, q.loc - p.loc)
    a = _woodbury_factor(q)
    term2 = (_batch_trace_xxt(p_tril * q._unbroadcasted_cov_diag.rsqrt().unsqueeze(-1))
             - _batch_trace_xxt(a.matmul(p_tril)))
    return 0.5 * (term1 + term2 + term3 - p.event_shape[0])


@register_kl(LowRankMultivariateNormal, MultivariateNormal)
def _kl_lowrank_mvn(p: LowRankMultivariateNormal, q: MultivariateNormal) -> Tensor:
    _check_event_shapes(p, q, "(Low Rank) Multivariate Normals")
    q_tril = q._unbroadcasted_scale_tril
    term1 = 2 * q_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1) - _lowrank_logdet(p)
    term3 = _batch_mahalanobis(q_tril, q.loc - p.loc)
    batch = tuple(_lower.broadcast_shapes(tuple(q_tril.shape[:-2]),
                                          tuple(p._unbroadcasted_cov_factor.shape[:-2])))
    n = p.event_shape[0]
    q_tril = q_tril.expand(batch + (n, n))
    p_factor = p._unbroadcasted_cov_factor.expand(batch + (n, p.cov_factor.size(-1)))
    p_diag = p._unbroadcasted_cov_diag.sqrt().diag_embed().expand(batch + (n, n))
    term2 = (_batch_trace_xxt(_solve_lower(q_tril, p_factor))
             + _batch_trace_xxt(_solve_lower(q_tril, p_diag)))
    return 0.5 * (term1 + term2 + term3 - p.event_shape[0])


@register_kl(ContinuousBernoulli, ContinuousBernoulli)
def _kl_cb_cb(p: ContinuousBernoulli, q: ContinuousBernoulli) -> Tensor:
    t1 = p.mean * (p.logits - q.logits)
    t2 = p._cont_bern_log_norm() + (-p.probs).log1p()
    t3 = -q._cont_bern_log_norm() - (-q.probs).log1p()
    return t1 + t2 + t3


def _cross_entropy_to_cb(p: object, q: ContinuousBernoulli) -> Tensor:
    """``KL(p || q)`` for a p on [0, 1]: the cross-entropy to q minus p's entropy."""
    return -p.entropy() - p.mean * q.logits - (-q.probs).log1p() - q._cont_bern_log_norm()


@register_kl(Beta, ContinuousBernoulli)
def _kl_beta_cb(p: Beta, q: ContinuousBernoulli) -> Tensor:
    return _cross_entropy_to_cb(p, q)


@register_kl(Uniform, ContinuousBernoulli)
def _kl_uniform_cb(p: Uniform, q: ContinuousBernoulli) -> Tensor:
    result = _cross_entropy_to_cb(p, q)
    # infinite unless [low, high] lies inside q's support
    outside = (p.high >= q.support.upper_bound) | (p.low <= q.support.lower_bound)
    return _lower.where(outside, _lower.ones_like(result) * math.inf, result)


@register_kl(ContinuousBernoulli, Exponential)
def _kl_cb_exponential(p: ContinuousBernoulli, q: Exponential) -> Tensor:
    return -p.entropy() - q.rate.log() + q.rate * p.mean


@register_kl(ContinuousBernoulli, Normal)
def _kl_cb_normal(p: ContinuousBernoulli, q: Normal) -> Tensor:
    t1 = -p.entropy()
    t2 = 0.5 * (math.log(2.0 * math.pi) + (q.loc / q.scale).square()) + q.scale.log()
    t3 = (p.variance + p.mean.square() - 2.0 * q.loc * p.mean) / (2.0 * q.scale.square())
    return t1 + t2 + t3


@register_kl(ContinuousBernoulli, Uniform)
def _kl_cb_uniform(p: ContinuousBernoulli, q: Uniform) -> Tensor:
    result = -p.entropy() + (q.high - q.low).log()
    outside = (q.low >= p.support.lower_bound) | (q.high <= p.support.upper_bound)
    return _lower.where(outside, _lower.ones_like(result) * math.inf, result)


@register_kl(ContinuousBernoulli, Pareto)
def _kl_cb_infinity(p: ContinuousBernoulli, q: Pareto) -> Tensor:
    return _infinite_like(p.probs)


# q's support does not cover p's: infinite divergence, shaped like p's first parameter
for _type_p, _param in ((Exponential, "rate"), (Gamma, "concentration"), (Gumbel, "loc"),
                        (Laplace, "loc"), (Normal, "loc"), (Pareto, "scale")):
    register_kl(_type_p, ContinuousBernoulli)(
        lambda p, q, _name=_param: _infinite_like(getattr(p, _name)))
