"""`Wishart` against torch.distributions.Wishart."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import hookgrad
from tests.distributions._family_check import check_errors, check_family, p, same, t

_CHOL = [[1.5, 0.0, 0.0], [0.3, 0.8, 0.0], [-0.2, 0.4, 1.1]]
_COV = (np.array(_CHOL) @ np.array(_CHOL).T).tolist()


def _tril(L):
    df, tril = p(L, [4.0, 6.5]), p(L, _CHOL)
    return L.distributions.Wishart(df, scale_tril=tril), [df, tril]


def _cov(L):
    df, cov = p(L, [3.5, 5.0]), p(L, _COV)
    return L.distributions.Wishart(df, covariance_matrix=cov), [df, cov]


def _prec(L):
    prec = p(L, _COV)
    return L.distributions.Wishart(7.0, precision_matrix=prec), [prec]


def _value(L):
    a = np.array([[2.0, 0.3, -0.5], [0.3, 1.5, 0.2], [-0.5, 0.2, 3.0]])
    return t(L, np.stack([a, a @ a]).tolist())


@pytest.mark.parametrize("make", [_tril, _cov, _prec])
def test_matches_torch(torch, make):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the redraw warning, checked below
        check_family(torch, make, _value, rtol=1e-8, atol=1e-10, rsample_grad=False)


def test_matrices_and_exponential_family_entropy_match_torch(torch):
    def run(L):
        d, params = _tril(L)
        ef = L.distributions.ExponentialFamily.entropy(d)
        out = [d.covariance_matrix, d.precision_matrix, d.scale_tril, ef]
        out.append([g for g in L.autograd.grad(d.precision_matrix.sum() + ef.sum(), params,
                                              allow_unused=True) if g is not None])
        return out
    for a, b in zip(run(hookgrad), run(torch), strict=True):
        same(a, b, "wishart", rtol=1e-8)


def test_rsample_backward_fails_as_in_torch(torch):
    # PyTorch's redraw writes into the boolean mask its own indexing saved for backward
    kinds = []
    for L in (torch, hookgrad):
        d, params = _tril(L)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            r = d.rsample((2,))
        try:
            L.autograd.grad(r.sum(), params)
            kinds.append(None)
        except RuntimeError as e:
            kinds.append("modified by an inplace operation" in str(e))
    assert kinds == [True, True]


def test_rsample_warns_like_torch_and_follows_the_mean(torch):
    for L in (torch, hookgrad):
        with pytest.warns(UserWarning, match="Singular sample detected"):
            assert tuple(_tril(L)[0].rsample((2,)).shape) == (2, 2, 3, 3)
    hookgrad.manual_seed(0)
    d = _tril(hookgrad)[0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        draw = d.sample((20000,)).numpy()
        one = d.sample()
    assert tuple(one.shape) == (2, 3, 3)
    np.testing.assert_allclose(draw.mean(0), d.mean.detach().numpy(), rtol=0.05, atol=0.1)
    np.testing.assert_allclose(draw.var(0), d.variance.detach().numpy(), rtol=0.1, atol=0.3)


def test_errors_match_torch(torch):
    D = lambda L: L.distributions  # noqa: E731
    eye = lambda L: t(L, np.eye(3).tolist())  # noqa: E731
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_errors(torch, [
            lambda L: D(L).Wishart(t(L, 4.0)),
            lambda L: D(L).Wishart(t(L, 4.0), covariance_matrix=eye(L), scale_tril=eye(L)),
            lambda L: D(L).Wishart(t(L, 4.0), scale_tril=t(L, [1.0, 2.0])),
            lambda L: D(L).Wishart(t(L, 2.0), covariance_matrix=eye(L)),
            lambda L: D(L).Wishart(t(L, 4.0), covariance_matrix=-eye(L)),
            lambda L: D(L).Wishart(t(L, 4.0), covariance_matrix=eye(L)).log_prob(-eye(L)),
        ])
    for L in (torch, hookgrad):
        with pytest.warns(UserWarning, match="Low df values"):
            D(L).Wishart(t(L, 2.5), covariance_matrix=eye(L))
