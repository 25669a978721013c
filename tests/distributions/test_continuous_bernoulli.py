"""`ContinuousBernoulli` against torch.distributions.ContinuousBernoulli."""

from __future__ import annotations

import pytest

import hookgrad
from tests.distributions._family_check import (check_errors, check_family, check_sample_stats,
                                               p, same, t)


def _probs(L):
    # 0.4995 sits inside the Taylor-expansion region
    probs = p(L, [0.2, 0.4995, 0.9])
    return L.distributions.ContinuousBernoulli(probs=probs), [probs]


def _logits(L):
    logits = p(L, [-1.5, 0.001, 2.0])
    return L.distributions.ContinuousBernoulli(logits=logits), [logits]


def _value(L):
    return t(L, [[0.0, 0.3, 1.0], [0.7, 0.5, 0.05]])


@pytest.mark.parametrize("make", [_probs, _logits])
def test_matches_torch(torch, make):
    check_family(torch, make, _value)


def test_rsample_from_the_same_noise_matches(torch):
    def run(L):
        d, params = _probs(L)
        u = t(L, [[0.1, 0.5, 0.9], [0.01, 0.7, 0.3]])
        y = d.icdf(u)
        return y, L.autograd.grad(y.sum(), params)[0]
    for a, b in zip(run(hookgrad), run(torch)):
        same(a, b, "icdf-noise")


def test_exponential_family_entropy_matches_torch(torch):
    def run(L):
        d = _logits(L)[0]
        return L.distributions.ExponentialFamily.entropy(d)
    same(run(hookgrad), run(torch), "expfamily", rtol=1e-7)


def test_samples_follow_the_distribution(torch):
    check_sample_stats(_probs)


def test_errors_match_torch(torch):
    D = lambda L: L.distributions  # noqa: E731
    check_errors(torch, [
        lambda L: D(L).ContinuousBernoulli(),
        lambda L: D(L).ContinuousBernoulli(probs=t(L, [1.5]), validate_args=True),
        lambda L: D(L).ContinuousBernoulli(probs=t(L, [0.5])).log_prob(t(L, [1.5])),
        lambda L: D(L).ContinuousBernoulli(logits=t(L, [0.5])).cdf(t(L, [-0.1])),
    ])
