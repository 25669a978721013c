"""``kl_divergence`` for the LowRankMultivariateNormal and ContinuousBernoulli pairs against
torch, values and parameter gradients in float64."""

from __future__ import annotations

import pytest

import hookgrad
from tests.distributions._family_check import check_errors, p, same, t

_W = [[[0.5, -0.2], [1.0, 0.3], [-0.4, 0.8]], [[0.1, 0.0], [0.2, 0.9], [1.2, -0.5]]]
_CHOL = [[1.5, 0.0, 0.0], [0.3, 0.8, 0.0], [-0.2, 0.4, 1.1]]


def _lowrank(L, shift=0.0):
    params = [p(L, [0.5 + shift, -1.0, 2.0]), p(L, _W),
              p(L, [[1.0, 0.5 + shift, 2.0], [0.3, 0.7, 1.1]])]
    return L.distributions.LowRankMultivariateNormal(*params), params


def _mvn(L):
    params = [p(L, [0.0, 1.0, -1.0]), p(L, _CHOL)]
    return L.distributions.MultivariateNormal(params[0], scale_tril=params[1]), params


def _cb(L, probs):
    params = [p(L, probs)]
    return L.distributions.ContinuousBernoulli(probs=params[0]), params


def _pairs(L):
    D = L.distributions
    lo, hi = p(L, [0.1, -0.5]), p(L, [0.8, 2.0])
    rate, loc, scale = p(L, [0.5, 2.0]), p(L, [0.3, -1.0]), p(L, [1.0, 0.5])
    c1, c0 = p(L, [0.7, 3.0]), p(L, [1.5, 2.5])
    return [
        (_lowrank(L), _lowrank(L, 0.4)), (_mvn(L), _lowrank(L)), (_lowrank(L), _mvn(L)),
        (_cb(L, [0.2, 0.4995]), _cb(L, [0.7, 0.9])),
        ((D.Beta(c1, c0), [c1, c0]), _cb(L, [0.3, 0.8])),
        ((D.Uniform(lo, hi), [lo, hi]), _cb(L, [0.3, 0.8])),
        (_cb(L, [0.3, 0.8]), (D.Exponential(rate), [rate])),
        (_cb(L, [0.3, 0.8]), (D.Normal(loc, scale), [loc, scale])),
        (_cb(L, [0.3, 0.8]), (D.Uniform(lo, hi), [lo, hi])),
        (_cb(L, [0.3, 0.8]), (D.Pareto(scale, rate), [])),
        ((D.Normal(loc, scale), []), _cb(L, [0.3, 0.8])),
        ((D.Gamma(c1, c0), []), _cb(L, [0.3, 0.8])),
        ((D.Gumbel(loc, scale), []), _cb(L, [0.3, 0.8])),
    ]


@pytest.mark.parametrize("index", range(13))
def test_kl_matches_torch(torch, index):
    def run(L):
        (dp, pp), (dq, pq) = _pairs(L)[index]
        kl = L.distributions.kl_divergence(dp, dq)
        params = pp + pq
        grads = []
        if kl.requires_grad and bool(kl.isfinite().all()):
            grads = [g for g in L.autograd.grad(kl.sum(), params, allow_unused=True)
                     if g is not None]
        return kl, grads
    for a, b in zip(run(hookgrad), run(torch), strict=True):
        same(a, b, f"kl{index}", rtol=1e-8, atol=1e-10)


def test_mismatched_event_shapes_raise_like_torch(torch):
    def lr(L, n):
        return L.distributions.LowRankMultivariateNormal(t(L, [0.0] * n), t(L, [[1.0]] * n),
                                                         t(L, [1.0] * n))
    def mvn(L, n):
        return L.distributions.MultivariateNormal(t(L, [0.0] * n), t(L, [[1.0]]).new_ones(
            n).diag_embed())
    kl = lambda L: L.distributions.kl_divergence  # noqa: E731
    check_errors(torch, [
        lambda L: kl(L)(lr(L, 2), lr(L, 3)),
        lambda L: kl(L)(mvn(L, 2), lr(L, 3)),
        lambda L: kl(L)(lr(L, 2), mvn(L, 3)),
    ])
