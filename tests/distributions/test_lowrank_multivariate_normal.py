"""`LowRankMultivariateNormal` against torch.distributions.LowRankMultivariateNormal."""

from __future__ import annotations

import numpy as np

import hookgrad
from tests.distributions._family_check import (check_errors, check_family, p, same, t)

_W = [[[0.5, -0.2], [1.0, 0.3], [-0.4, 0.8]], [[0.1, 0.0], [0.2, 0.9], [1.2, -0.5]]]


def _make(L):
    loc, w, d = p(L, [0.5, -1.0, 2.0]), p(L, _W), p(L, [[1.0, 0.5, 2.0], [0.3, 0.7, 1.1]])
    return L.distributions.LowRankMultivariateNormal(loc, w, d), [loc, w, d]


def _value(L):
    return t(L, [[0.1, 0.2, 0.3], [1.0, -2.0, 0.5]])


def test_matches_torch(torch):
    check_family(torch, _make, _value)


def test_matrices_match_torch_with_gradients(torch):
    def run(L):
        d, params = _make(L)
        out = []
        for name in ("covariance_matrix", "precision_matrix", "scale_tril"):
            m = getattr(d, name)
            out += [m, [g for g in L.autograd.grad((m * m).sum(), params, allow_unused=True)
                       if g is not None]]
        return out
    for a, b in zip(run(hookgrad), run(torch)):
        same(a, b, "matrices")


def test_samples_follow_the_covariance(torch):
    hookgrad.manual_seed(0)
    d = _make(hookgrad)[0]
    draw = d.sample((20000,)).numpy()
    assert draw.shape == (20000, 2, 3)
    for b in range(2):
        cov = np.cov(draw[:, b].T)
        np.testing.assert_allclose(cov, d.covariance_matrix[b].detach().numpy(), atol=0.08)


def test_errors_match_torch(torch):
    D = lambda L: L.distributions  # noqa: E731
    check_errors(torch, [
        lambda L: D(L).LowRankMultivariateNormal(t(L, 0.0), t(L, [[1.0]]), t(L, [1.0])),
        lambda L: D(L).LowRankMultivariateNormal(t(L, [0.0]), t(L, [1.0]), t(L, [1.0])),
        lambda L: D(L).LowRankMultivariateNormal(t(L, [0.0, 1.0]), t(L, [[1.0]]), t(L, [1.0])),
        lambda L: D(L).LowRankMultivariateNormal(t(L, [0.0]), t(L, [[1.0]]), t(L, [1.0, 2.0])),
        lambda L: D(L).LowRankMultivariateNormal(t(L, [0.0]), t(L, [[1.0]]), t(L, [-1.0])),
        lambda L: D(L).LowRankMultivariateNormal(t(L, [[0.0]] * 3), t(L, [[[1.0]]] * 2),
                                                 t(L, [1.0])),
    ])
