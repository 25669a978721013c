"""`NegativeBinomial` against torch.distributions.NegativeBinomial."""

from __future__ import annotations

import pytest

from tests.distributions._family_check import (check_errors, check_family, check_sample_stats,
                                               p, t)


def _probs(L):
    count, probs = p(L, [2.0, 5.5, 0.0]), p(L, [0.3, 0.6, 0.2])
    return L.distributions.NegativeBinomial(count, probs=probs), [count, probs]


def _logits(L):
    count, logits = p(L, [2.0, 0.7, 3.0]), p(L, [-0.5, 0.4, 1.2])
    return L.distributions.NegativeBinomial(count, logits=logits), [count, logits]


def _value(L):
    return t(L, [[0.0, 3.0, 0.0], [4.0, 1.0, 2.0]])


@pytest.mark.parametrize("make", [_probs, _logits])
def test_matches_torch(torch, make):
    check_family(torch, make, _value)


def test_samples_follow_the_distribution(torch):
    check_sample_stats(_logits, n=40000, rtol=0.06, atol=0.08)


def test_errors_match_torch(torch):
    D = lambda L: L.distributions  # noqa: E731
    check_errors(torch, [
        lambda L: D(L).NegativeBinomial(t(L, [1.0])),
        lambda L: D(L).NegativeBinomial(t(L, [1.0]), probs=t(L, [0.5]), logits=t(L, [0.5])),
        lambda L: D(L).NegativeBinomial(t(L, [-1.0]), probs=t(L, [0.5])),
        lambda L: D(L).NegativeBinomial(t(L, [1.0]), probs=t(L, [1.0])),
        lambda L: D(L).NegativeBinomial(t(L, [1.0]), probs=t(L, [0.5])).log_prob(t(L, [1.5])),
        lambda L: D(L).NegativeBinomial(t(L, [1.0]), probs=t(L, [0.5])).log_prob(t(L, [-1.0])),
    ])
