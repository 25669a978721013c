"""Oracle tests of the spectral decompositions (eigh, svd, qr) and the linalg composites.

Singular and eigen vectors are defined up to sign, so scenarios compare sign-invariant
functions of them (squares, reconstructions), as PyTorch's own gradient tests do.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import hookgrad
from tests.census._both import run_both, same

pytestmark = pytest.mark.oracle
r = np.random.RandomState(7)
SYM = (lambda a: a + a.T)(r.randn(4, 4))
BSYM = (lambda a: a + a.transpose(0, 2, 1))(r.randn(2, 3, 3))
TALL, WIDE, SQ = r.randn(5, 3), r.randn(3, 5), r.randn(4, 4)
SPD = SQ @ SQ.T + 4 * np.eye(4)
LOW = np.tril(r.randn(4, 4)) + 4 * np.eye(4)


def _sq(V):
    return V * V


CASES = {
    "eigh_values": (lambda L, t: L.linalg.eigh(t[0])[0], SYM),
    "eigh_vectors": (lambda L, t: _sq(L.linalg.eigh(t[0])[1]), SYM),
    "eigh_upper_batched": (lambda L, t: _sq(L.linalg.eigh(t[0], UPLO="U").eigenvectors), BSYM),
    "eigh_both": (lambda L, t: (lambda e: e[1] * e[0].unsqueeze(-2) @ e[1].mT)(
        L.linalg.eigh(t[0])), SYM),
    "eigvalsh": (lambda L, t: L.linalg.eigvalsh(t[0]), BSYM),
    "svd_values_tall": (lambda L, t: L.linalg.svd(t[0], full_matrices=False)[1], TALL),
    "svd_U_tall": (lambda L, t: _sq(L.linalg.svd(t[0], full_matrices=False)[0]), TALL),
    "svd_Vh_wide": (lambda L, t: _sq(L.linalg.svd(t[0], full_matrices=False).Vh), WIDE),
    "svd_U_wide": (lambda L, t: _sq(L.linalg.svd(t[0], full_matrices=False).U), WIDE),
    "svd_Vh_tall": (lambda L, t: _sq(L.linalg.svd(t[0], full_matrices=False).Vh), TALL),
    "svd_full_U": (lambda L, t: _sq(L.linalg.svd(t[0])[0][..., :3]), TALL),
    "svd_all_sq": (lambda L, t: (lambda u, s, vh: _sq(u) @ s.diag_embed() @ _sq(vh))(
        *L.linalg.svd(t[0])), SQ),
    "svdvals": (lambda L, t: L.linalg.svdvals(t[0]), WIDE),
    "torch_svd": (lambda L, t: _sq(L.svd(t[0]).V), TALL),
    "torch_svd_no_uv": (lambda L, t: L.svd(t[0], compute_uv=False)[1], TALL),
    "qr_tall": (lambda L, t: L.linalg.qr(t[0]).Q * 2 + 0, TALL),
    "qr_tall_R": (lambda L, t: L.linalg.qr(t[0]).R, TALL),
    "qr_wide_Q": (lambda L, t: L.linalg.qr(t[0])[0], WIDE),
    "qr_wide_R": (lambda L, t: L.linalg.qr(t[0])[1], WIDE),
    "qr_complete_square": (lambda L, t: L.linalg.qr(t[0], "complete")[0], SQ),
    "qr_r": (lambda L, t: L.linalg.qr(t[0].detach(), "r")[1], TALL),
    "pinv": (lambda L, t: L.linalg.pinv(t[0]), TALL),
    "pinv_hermitian": (lambda L, t: L.linalg.pinv(t[0], hermitian=True), SYM),
    "pinverse": (lambda L, t: L.pinverse(t[0]), WIDE),
    "matrix_rank": (lambda L, t: L.linalg.matrix_rank(t[0]), np.outer(r.randn(4), r.randn(3))),
    "matrix_rank_tol": (lambda L, t: L.linalg.matrix_rank(t[0], atol=1.0, rtol=0.0), TALL),
    "lstsq": (lambda L, t: L.linalg.lstsq(t[0], t[1]).solution, TALL, r.randn(5, 2)),
    "lstsq_gelsd": (lambda L, t: L.linalg.lstsq(t[0].detach(), t[1].detach(), driver="gelsd")[1:],
                    TALL, r.randn(5, 2)),
    "cond": (lambda L, t: L.linalg.cond(t[0]), SQ),
    "cond_fro": (lambda L, t: L.linalg.cond(t[0].detach(), "fro"), SQ),
    "cholesky_ex": (lambda L, t: L.linalg.cholesky_ex(t[0]).L, SPD),
    "inv_ex": (lambda L, t: L.linalg.inv_ex(t[0]).inverse, SQ),
    "solve_ex": (lambda L, t: L.linalg.solve_ex(t[0], t[1]).result, SQ, r.randn(4, 2)),
    "solve_triangular": (lambda L, t: L.linalg.solve_triangular(t[0], t[1], upper=False), SQ,
                         r.randn(4, 2)),
    "solve_triangular_right_unit": (lambda L, t: L.linalg.solve_triangular(
        t[0], t[1], upper=True, left=False, unitriangular=True), SQ, r.randn(3, 4)),
    "triangular_solve": (lambda L, t: L.triangular_solve(t[1], t[0], transpose=True)[0], SQ,
                         r.randn(4, 2)),
    "cholesky_solve": (lambda L, t: L.cholesky_solve(t[1], t[0]), LOW, r.randn(4, 2)),
    "cholesky_solve_upper": (lambda L, t: L.cholesky_solve(t[1], t[0].mT, upper=True), LOW,
                             r.randn(4, 2)),
    "cholesky_inverse": (lambda L, t: L.cholesky_inverse(t[0]), LOW),
    "tensorinv": (lambda L, t: L.linalg.tensorinv(t[0].reshape(4, 2, 2), 1), r.randn(4, 4)),
    "tensorsolve": (lambda L, t: L.linalg.tensorsolve(t[0].reshape(2, 3, 6), t[1]),
                    r.randn(6, 6), r.randn(2, 3)),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_decomposition_matches_pytorch(torch, name):
    fn, *arrays = CASES[name]
    with np.errstate(all="ignore"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            run_both(torch, fn, *arrays)


GRADCHECK = {
    "eigh": (lambda L: lambda a: (lambda e: (e[0], _sq(e[1])))(L.linalg.eigh(a + a.mT)), SYM),
    "svd_tall": (lambda L: lambda a: (lambda u, s, v: (_sq(u), s, _sq(v)))(
        *L.linalg.svd(a, full_matrices=False)), TALL),
    "svd_wide": (lambda L: lambda a: (lambda u, s, v: (_sq(u), s, _sq(v)))(
        *L.linalg.svd(a, full_matrices=False)), WIDE),
    "qr_tall": (lambda L: lambda a: tuple(L.linalg.qr(a)), TALL),
    "qr_wide": (lambda L: lambda a: tuple(L.linalg.qr(a)), WIDE),
    "pinv": (lambda L: L.linalg.pinv, TALL),
}


@pytest.mark.parametrize("name", sorted(GRADCHECK))
def test_gradcheck_float64(name):
    make, arr = GRADCHECK[name]
    a = hookgrad.tensor(arr, requires_grad=True)
    assert hookgrad.autograd.gradcheck(make(hookgrad), (a,))
    assert hookgrad.autograd.gradgradcheck(make(hookgrad), (a,))


@pytest.mark.parametrize("name", ["eigh", "svd_tall", "svd_wide", "qr_tall", "qr_wide"])
def test_forward_ad_float64(name):
    make, arr = GRADCHECK[name]
    a = hookgrad.tensor(arr, requires_grad=True)
    assert hookgrad.autograd.gradcheck(make(hookgrad), (a,), check_forward_ad=True)


def test_node_names_and_errors(torch):
    def scenario(L):
        a = L.tensor(SYM, requires_grad=True)
        names = [type(L.linalg.eigh(a)[0].grad_fn).__name__,
                 type(L.linalg.svd(a)[1].grad_fn).__name__,
                 type(L.linalg.qr(a)[0].grad_fn).__name__]
        errs = []
        for f in (lambda: L.linalg.eigh(L.ones(2, 3)), lambda: L.linalg.svd(L.ones(3)),
                  lambda: L.linalg.qr(L.ones(2, 2, dtype=L.long)),
                  lambda: L.linalg.qr(L.ones(2, 2), "x"), lambda: L.matrix_rank(a),
                  lambda: L.symeig(a), lambda: L.eig(a), lambda: L.lstsq(a, a),
                  lambda: L.solve(a, a),
                  lambda: L.linalg.qr(L.tensor(TALL, requires_grad=True), "r")[1].sum()
                  .backward()):
            try:
                f()
                errs.append(None)
            except Exception as e:  # noqa: BLE001 - the types are what is compared
                errs.append((type(e).__name__, str(e)))
        info = L.linalg.cholesky_ex(L.tensor(-np.eye(3)))[1]
        return names, errs, (int(info), str(info.dtype))
    h, t = scenario(hookgrad), scenario(torch)
    assert h[0] == t[0] and h[2] == t[2]
    for a, b in zip(h[1], t[1]):
        assert (a is None) == (b is None) and (a is None or a[0] == b[0]), (a, b)
    assert [e[1] for e in h[1][4:9]] == [e[1] for e in t[1][4:9]]


def test_vmap_of_decompositions(torch):
    x = r.randn(3, 4, 4)
    x = x + x.transpose(0, 2, 1)
    h = hookgrad.func.vmap(lambda a: hookgrad.linalg.eigvalsh(a))(hookgrad.tensor(x))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        t = torch.func.vmap(lambda a: torch.linalg.eigvalsh(a))(torch.tensor(x))
    assert same(h, t)
    h = hookgrad.func.vmap(hookgrad.linalg.svdvals)(hookgrad.tensor(x))
    with warnings.catch_warnings():  # torch warns that it has no batching rule of its own
        warnings.simplefilter("ignore", UserWarning)
        t = torch.func.vmap(torch.linalg.svdvals)(torch.tensor(x))
    assert same(h, t)
