"""svd_lowrank / pca_lowrank against PyTorch on matrices whose low-rank factors are determined
(rank <= q): singular values, reconstructions, shapes, gradients of the singular values, errors."""

from __future__ import annotations

import numpy as np
import pytest

import hookgrad
from tests._errors import err

RNG = np.random.default_rng(1)
A = RNG.standard_normal((7, 2)) @ RNG.standard_normal((2, 5))

CASES = {
    "svd_tall": lambda lib, a: lib.svd_lowrank(a, q=3),
    "svd_wide": lambda lib, a: lib.svd_lowrank(a.t(), q=2, niter=1),
    "svd_M": lambda lib, a: lib.svd_lowrank(a, q=3, M=a[:1] * 0.5),
    "pca": lambda lib, a: lib.pca_lowrank(a, q=2),
    "pca_uncentered": lambda lib, a: lib.pca_lowrank(a, q=2, center=False),
    "pca_default_q": lambda lib, a: lib.pca_lowrank(a),
}


def _run(lib, name):
    a = lib.tensor(A, requires_grad=True)
    U, S, V = CASES[name](lib, a)
    recon = (U * S) @ V.transpose(-2, -1)
    k = 2  # the determined singular values (the rest are round-off)
    (g,) = lib.autograd.grad(S[:k].sum(), (a,))
    return S[:k].tolist(), recon.tolist(), tuple(U.shape), tuple(V.shape), g.tolist()


@pytest.mark.oracle
@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_torch(torch, name):
    mine, theirs = _run(hookgrad, name), _run(torch, name)
    np.testing.assert_allclose(mine[0], theirs[0], rtol=1e-10)
    np.testing.assert_allclose(mine[1], theirs[1], rtol=1e-9, atol=1e-9)
    assert mine[2:4] == theirs[2:4]
    # q above the rank leaves round-off directions in the basis: gradients agree to ~1e-8
    np.testing.assert_allclose(mine[4], theirs[4], rtol=1e-6, atol=1e-7)


BAD = {
    "q_big": lambda lib: lib.pca_lowrank(lib.ones(5, 3), q=4),
    "q_negative": lambda lib: lib.pca_lowrank(lib.ones(5, 3), q=-1),
    "niter": lambda lib: lib.pca_lowrank(lib.ones(5, 3), niter=-1),
}


@pytest.mark.oracle
@pytest.mark.parametrize("name", sorted(BAD))
def test_errors_match_torch(torch, name):
    mine, theirs = err(lambda: BAD[name](hookgrad)), err(lambda: BAD[name](torch))
    assert theirs is not None and mine == theirs
