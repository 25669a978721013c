"""`FisherSnedecor` against torch.distributions.FisherSnedecor."""

from __future__ import annotations

import pytest

import hookgrad
from tests.distributions._family_check import (check_errors, check_family, check_sample_stats,
                                               p, t)


def _make(L):
    # df below 2 / 4 give NaN mean, mode and variance, as in PyTorch
    df1, df2 = p(L, [3.0, 1.5, 10.0]), p(L, [6.0, 3.0, 12.0])
    return L.distributions.FisherSnedecor(df1, df2), [df1, df2]


def _value(L):
    return t(L, [[0.3, 1.1, 2.9], [0.7, 5.0, 0.05]])


def test_matches_torch(torch):
    check_family(torch, _make, _value)


def test_samples_follow_the_distribution(torch):
    def make(L):
        df1, df2 = p(L, [5.0, 10.0]), p(L, [20.0, 30.0])
        return L.distributions.FisherSnedecor(df1, df2), [df1, df2]
    check_sample_stats(make, n=40000, rtol=0.06)


def test_scalar_parameters_give_an_empty_batch_shape(torch):
    for L in (torch, hookgrad):
        assert tuple(L.distributions.FisherSnedecor(2.0, 3.0).batch_shape) == ()


@pytest.mark.parametrize("case", range(3))
def test_errors_match_torch(torch, case):
    D = lambda L: L.distributions  # noqa: E731
    check_errors(torch, [[
        lambda L: D(L).FisherSnedecor(t(L, [0.0]), t(L, [1.0])),
        lambda L: D(L).FisherSnedecor(t(L, [1.0]), t(L, [-1.0])),
        lambda L: D(L).FisherSnedecor(t(L, [1.0]), t(L, [1.0])).log_prob(t(L, [-1.5])),
    ][case]])
