"""`LKJCholesky` and `CorrCholeskyTransform` against torch."""

from __future__ import annotations

import numpy as np
import pytest

import hookgrad
from tests.distributions._family_check import check_errors, check_family, p, same, t


def _factor(L, x):
    return L.distributions.transforms.CorrCholeskyTransform()(t(L, x))


def _make(L):
    conc = p(L, [0.5, 2.0])
    return L.distributions.LKJCholesky(3, conc), [conc]


def _value(L):
    return L.stack([_factor(L, [0.3, -1.2, 2.0]), _factor(L, [0.1, 0.5, -0.7])])


@pytest.mark.parametrize("dim", [2, 3, 4])
def test_matches_torch(torch, dim):
    n = dim * (dim - 1) // 2
    def make(L):
        conc = p(L, [0.5, 2.0])
        return L.distributions.LKJCholesky(dim, conc), [conc]
    def value(L):
        return L.stack([_factor(L, np.linspace(-1, 1.5, n).tolist()),
                        _factor(L, np.linspace(0.7, -0.3, n).tolist())])
    check_family(torch, make, value)


def test_transform_matches_torch(torch):
    def run(L):
        T = L.distributions.transforms
        tr = T.CorrCholeskyTransform()
        x = p(L, [[0.3, -1.2, 2.0, 0.4, -0.1, 0.9], [0.1, 0.5, -0.7, 0.0, 1.5, -2.0]])
        y = tr(x)
        lad = tr.log_abs_det_jacobian(x, y)
        grads = L.autograd.grad((y * y.detach()).sum() + lad.sum(), x)
        reg = [repr(f(L.distributions.constraints.corr_cholesky))
               for f in (L.distributions.biject_to, L.distributions.transform_to)]
        return (y, tr.inv(y), lad, grads, tr.forward_shape((2, 6)), tr.inverse_shape((2, 4, 4)),
                repr(tr.domain), repr(tr.codomain), tr.bijective, reg)
    for a, b in zip(run(hookgrad), run(torch), strict=True):
        same(a, b, "corr_cholesky")


def test_samples_are_correlation_factors_with_the_right_spread(torch):
    hookgrad.manual_seed(0)
    d = hookgrad.distributions.LKJCholesky(3, t(hookgrad, [0.5, 4.0]))
    draw = d.sample((4000,))
    assert tuple(draw.shape) == (4000, 2, 3, 3)
    corr = (draw @ draw.mT).numpy()
    np.testing.assert_allclose(np.diagonal(corr, axis1=-2, axis2=-1), 1.0, atol=1e-12)
    # off-diagonal correlations of LKJ(eta) in dimension D have variance 1 / (2 eta + D - 1)
    off = corr[..., 1, 0]
    np.testing.assert_allclose(off.var(0), [1 / 3.0, 1 / 10.0], rtol=0.1)
    assert bool(hookgrad.distributions.constraints.corr_cholesky.check(draw).all())


def test_errors_match_torch(torch):
    D = lambda L: L.distributions  # noqa: E731
    check_errors(torch, [
        lambda L: D(L).LKJCholesky(1, t(L, 1.0)),
        lambda L: D(L).LKJCholesky(2, t(L, 0.0)),
        lambda L: D(L).LKJCholesky(2, t(L, 1.0)).log_prob(t(L, [[1.0, 0.0], [1.0, 1.0]])),
        lambda L: D(L).transforms.CorrCholeskyTransform().forward_shape((2, 5)),
        lambda L: D(L).transforms.CorrCholeskyTransform().inverse_shape((2, 3)),
    ])
