"""vmap and vmap(grad) of the matrix functions (inv, det, cholesky) against torch.func: their
batching rule treats the vmap dim as one more leading matrix dim."""

from __future__ import annotations

import numpy as np
import pytest

import hookgrad

rng = np.random.default_rng(5)
_M = rng.standard_normal((4, 2, 3, 3))
SPD = _M @ np.swapaxes(_M, -1, -2) + 3 * np.eye(3)   # batch of symmetric positive definite


def _fn(lib, name):
    return getattr(lib.linalg, name)


@pytest.mark.oracle
@pytest.mark.parametrize("name", ["inv", "det", "cholesky"])
def test_vmap_matrix_function_matches_torch(torch, name):
    theirs = torch.func.vmap(_fn(torch, name))(torch.tensor(SPD))
    mine = hookgrad.func.vmap(_fn(hookgrad, name))(hookgrad.tensor(SPD))
    assert tuple(mine.shape) == tuple(theirs.shape)
    np.testing.assert_allclose(mine.numpy(), theirs.numpy(), rtol=1e-10, atol=1e-12)


@pytest.mark.oracle
@pytest.mark.parametrize("name", ["inv", "det", "cholesky"])
def test_vmap_of_grad_of_matrix_function_matches_torch(torch, name):
    def per_sample(lib):
        return lib.func.vmap(lib.func.grad(lambda a: _fn(lib, name)(a).sum()))

    theirs = per_sample(torch)(torch.tensor(SPD))
    mine = per_sample(hookgrad)(hookgrad.tensor(SPD))
    np.testing.assert_allclose(mine.numpy(), theirs.numpy(), rtol=1e-8, atol=1e-10)


MIXED = rng.standard_normal((5, 3, 3))  # determinants of both signs


@pytest.mark.oracle
def test_vmap_slogdet_and_logdet_match_torch(torch):
    def run(lib):
        x = lib.tensor(MIXED)
        sign, logabs = lib.func.vmap(lib.linalg.slogdet)(x)
        logdet = lib.func.vmap(lib.logdet)(x)
        g = lib.func.vmap(lib.func.grad(lambda a: lib.linalg.slogdet(a)[1]))(x)
        nested = lib.func.vmap(lib.func.vmap(lambda a: lib.linalg.slogdet(a)[0]))(
            x.reshape(5, 1, 3, 3))
        return [sign.numpy(), logabs.numpy(), logdet.numpy(), g.numpy(), nested.numpy()]

    mine, theirs = run(hookgrad), run(torch)
    assert set(np.unique(mine[0])) == {-1.0, 1.0}
    for a, b in zip(mine, theirs):
        np.testing.assert_allclose(a, b, rtol=1e-8, atol=1e-10, equal_nan=True)
