"""`VonMises` against torch.distributions.VonMises."""

from __future__ import annotations

import numpy as np

import hookgrad
from tests.distributions._family_check import check_errors, check_family, p, t


def _make(L):
    # concentrations on both sides of the 3.75 switch between the Bessel approximations
    loc, conc = p(L, [0.0, 1.0, -2.5]), p(L, [0.5, 3.0, 8.0])
    return L.distributions.VonMises(loc, conc), [loc, conc]


def _value(L):
    return t(L, [[0.3, -1.0, 7.0], [3.0, 1.1, -2.0]])


def test_matches_torch(torch):
    check_family(torch, _make, _value)


def test_float32_samples_keep_their_dtype(torch):
    for L in (torch, hookgrad):
        d = L.distributions.VonMises(t(L, [0.0], "float32"), t(L, [1e-6], "float32"))
        draw = d.sample((4, 2))
        assert tuple(draw.shape) == (4, 2, 1) and draw.dtype == L.float32


def test_samples_follow_the_distribution(torch):
    hookgrad.manual_seed(0)
    d = _make(hookgrad)[0]
    draw = d.sample((20000,)).numpy()
    assert (np.abs(draw) <= np.pi).all()
    # circular mean and circular variance
    resultant = np.exp(1j * draw).mean(0)
    loc = np.angle(np.exp(1j * d.loc.detach().numpy()))
    np.testing.assert_allclose(np.angle(resultant), loc, atol=0.05)
    np.testing.assert_allclose(1 - np.abs(resultant), d.variance.detach().numpy(), atol=0.02)


def test_errors_match_torch(torch):
    D = lambda L: L.distributions  # noqa: E731
    check_errors(torch, [
        lambda L: D(L).VonMises(t(L, [0.0]), t(L, [0.0])),
        lambda L: D(L).VonMises(t(L, [0.0]), t(L, [1.0])).log_prob(t(L, [float("nan")])),
        lambda L: D(L).VonMises(t(L, [0.0]), t(L, [1.0])).entropy(),
    ])
