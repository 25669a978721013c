"""`GeneralizedPareto` against torch.distributions.GeneralizedPareto.

PyTorch's log_prob compares the concentration with a float32 zero, so it only works in
float32 (float64 raises RuntimeError); the full comparison runs in float32 and the methods
that do work in float64 are compared there too."""

from __future__ import annotations

import pytest

import hookgrad
from tests.distributions._family_check import (check_errors, check_family, check_sample_stats,
                                               p, same, t)


def _make32(L):
    loc, scale = p(L, [0.0, 1.0, -0.5], "float32"), p(L, [1.0, 2.0, 0.5], "float32")
    conc = p(L, [0.2, 0.0, -0.3], "float32")
    return L.distributions.GeneralizedPareto(loc, scale, conc), [loc, scale, conc]


def _value32(L):
    return t(L, [[0.3, 1.5, 0.2], [2.0, 4.0, -0.4]], "float32")


def _make64(L):
    loc, scale, conc = p(L, [0.0, 1.0, -0.5]), p(L, [1.0, 2.0, 0.5]), p(L, [0.2, 0.6, -0.3])
    return L.distributions.GeneralizedPareto(loc, scale, conc), [loc, scale, conc]


def test_matches_torch_float32(torch):
    check_family(torch, _make32, _value32, rtol=2e-5, atol=1e-6, dtype="float32")


def test_float64_methods_match_torch(torch):
    def run(L):
        d, params = _make64(L)
        u = t(L, [[0.1, 0.5, 0.9]])
        out = [d.icdf(u), d.mean, d.variance, d.entropy(), repr(d.support)]
        out.append(L.autograd.grad((d.icdf(u) + d.entropy()).sum(), params))
        try:
            d.log_prob(t(L, [0.3, 1.5, 0.2]))
        except RuntimeError as e:
            out.append(type(e).__name__)
        return out
    for a, b in zip(run(hookgrad), run(torch), strict=True):
        same(a, b, "float64")


def test_samples_follow_the_distribution(torch):
    def make(L):
        return (L.distributions.GeneralizedPareto(t(L, [0.0, 1.0]), t(L, [1.0, 0.5]),
                                                  t(L, [0.1, -0.2])), [])
    check_sample_stats(make)


@pytest.mark.parametrize("case", range(2))
def test_errors_match_torch(torch, case):
    D = lambda L: L.distributions  # noqa: E731
    check_errors(torch, [[
        lambda L: D(L).GeneralizedPareto(t(L, [0.0]), t(L, [0.0]), t(L, [0.1])),
        lambda L: D(L).GeneralizedPareto(t(L, [0.0], "float32"), t(L, [1.0], "float32"),
                                         t(L, [-0.5], "float32")).log_prob(
            t(L, [3.0], "float32")),
    ][case]])
