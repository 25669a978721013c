"""`Kumaraswamy` against torch.distributions.Kumaraswamy."""

from __future__ import annotations

from tests.distributions._family_check import (check_errors, check_family, check_sample_stats,
                                               p, t)


def _make(L):
    # the 0.7 concentration makes that mode NaN, as in PyTorch
    a, b = p(L, [2.0, 0.7, 5.0]), p(L, [3.0, 1.5, 1.2])
    return L.distributions.Kumaraswamy(a, b), [a, b]


def _value(L):
    return t(L, [[0.3, 0.1, 0.9], [0.7, 0.5, 0.05]])


def test_matches_torch(torch):
    check_family(torch, _make, _value)


def test_samples_follow_the_distribution(torch):
    check_sample_stats(_make)


def test_errors_match_torch(torch):
    D = lambda L: L.distributions  # noqa: E731
    check_errors(torch, [
        lambda L: D(L).Kumaraswamy(t(L, [0.0]), t(L, [1.0])),
        lambda L: D(L).Kumaraswamy(t(L, [1.0]), t(L, [-1.0])),
        lambda L: D(L).Kumaraswamy(t(L, [1.0]), t(L, [1.0])).log_prob(t(L, [1.5])),
    ])
