"""LU factorisation/unpack/solve, torch.lu/lu_solve, geqrf/orgqr/ormqr against PyTorch."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import hookgrad
from tests._errors import err

RNG = np.random.default_rng(7)
SQ = RNG.standard_normal((4, 4))
WIDE = RNG.standard_normal((3, 5))
TALL = RNG.standard_normal((5, 3))
BATCH = RNG.standard_normal((2, 3, 3))
RHS = RNG.standard_normal((4, 2))
OTHER = RNG.standard_normal((2, 5))
_H, TAU = np.linalg.qr(TALL, mode="raw")
H = _H.T.copy()  # LAPACK's packed reflectors, as torch.geqrf returns them


def _flat(x):
    if isinstance(x, (tuple, list)):
        return [v for e in x for v in _flat(e)]
    return [np.asarray(x.detach().numpy(), dtype=float)]


CASES = {
    "lu_factor_sq": lambda lib, a: lib.linalg.lu_factor(a(SQ)),
    "lu_factor_wide": lambda lib, a: lib.linalg.lu_factor(a(WIDE)),
    "lu_factor_tall": lambda lib, a: lib.linalg.lu_factor(a(TALL)),
    "lu_factor_batch": lambda lib, a: lib.linalg.lu_factor_ex(a(BATCH)),
    "lu_sq": lambda lib, a: lib.linalg.lu(a(SQ)),
    "lu_wide": lambda lib, a: lib.linalg.lu(a(WIDE)),
    "lu_tall": lambda lib, a: lib.linalg.lu(a(TALL)),
    "lu_batch": lambda lib, a: lib.linalg.lu(a(BATCH)),
    "lu_unpack_wide": lambda lib, a: lib.lu_unpack(*lib.linalg.lu_factor(a(WIDE))),
    "lu_unpack_tall": lambda lib, a: lib.lu_unpack(*lib.linalg.lu_factor(a(TALL))),
    "lu_solve": lambda lib, a: lib.linalg.lu_solve(*lib.linalg.lu_factor(a(SQ)), a(RHS)),
    "lu_solve_adjoint": lambda lib, a: lib.linalg.lu_solve(*lib.linalg.lu_factor(a(SQ)),
                                                           a(RHS), adjoint=True),
    "lu_solve_right": lambda lib, a: lib.linalg.lu_solve(*lib.linalg.lu_factor(a(SQ)),
                                                         a(RHS.T), left=False),
    "lu_solve_right_adjoint": lambda lib, a: lib.linalg.lu_solve(
        *lib.linalg.lu_factor(a(SQ)), a(RHS.T), left=False, adjoint=True),
    "torch_lu": lambda lib, a: lib.lu(a(SQ), get_infos=True),
    "torch_lu_method": lambda lib, a: a(SQ).lu(),
    "torch_lu_solve": lambda lib, a: lib.lu_solve(a(RHS), *lib.lu(a(SQ))),
    "torch_lu_solve_method": lambda lib, a: a(RHS).lu_solve(*a(SQ).lu()),
    "orgqr": lambda lib, a: lib.orgqr(a(H), a(TAU)),
    "ormqr": lambda lib, a: lib.ormqr(a(H), a(TAU), a(TALL)),
    "ormqr_right_t": lambda lib, a: a(H).ormqr(a(TAU), a(OTHER), left=False, transpose=True),
}


def _run(lib, name):
    leaves = []

    def a(arr):
        t = lib.tensor(arr, dtype=lib.float64, requires_grad=True)
        leaves.append(t)
        return t

    out = CASES[name](lib, a)
    outs = out if isinstance(out, tuple) else (out,)
    diff = [o for o in outs if o.requires_grad]
    loss = sum(((o * o).sum() if i % 2 else o.sum() * 1.5) for i, o in enumerate(diff))
    grads = lib.autograd.grad(loss, leaves, allow_unused=True, materialize_grads=True)
    names = [o.grad_fn.name() if o.grad_fn is not None else None for o in outs]
    dtypes = [str(o.dtype).split(".")[-1] for o in outs]
    return _flat(outs), [np.asarray(g.numpy()) for g in grads], names, dtypes


@pytest.mark.oracle
@pytest.mark.parametrize("name", sorted(CASES))
def test_values_and_gradients_match_torch(torch, name):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch.lu / torch.lu_solve deprecation warnings
        mine, theirs = _run(hookgrad, name), _run(torch, name)
    for a, b in zip(mine[0] + mine[1], theirs[0] + theirs[1]):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-10)
    if not name.startswith(("orgqr", "ormqr")):  # composites here
        assert mine[2] == theirs[2]
    assert mine[3] == theirs[3]


@pytest.mark.parametrize("fn", [
    lambda a, b: hookgrad.linalg.lu_factor(a).LU,
    lambda a, b: hookgrad.linalg.lu(a[:3]).U,
    lambda a, b: hookgrad.linalg.lu(a[:, :3]).L,
    lambda a, b: hookgrad.linalg.lu_solve(*hookgrad.linalg.lu_factor(a), b, adjoint=True),
    lambda a, b: hookgrad.linalg.lu_solve(*hookgrad.linalg.lu_factor(a), b.t(), left=False),
])
def test_gradcheck_and_gradgradcheck(fn):
    a = hookgrad.tensor(SQ, dtype=hookgrad.float64, requires_grad=True)
    b = hookgrad.tensor(RHS, dtype=hookgrad.float64, requires_grad=True)
    assert hookgrad.autograd.gradcheck(fn, (a, b))
    assert hookgrad.autograd.gradgradcheck(fn, (a, b))


def test_geqrf_matches_torch(torch):
    for arr in (TALL, WIDE, BATCH):
        mine = hookgrad.geqrf(hookgrad.tensor(arr))
        theirs = torch.geqrf(torch.tensor(arr))
        for a, b in zip(mine, theirs):
            np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-12, atol=1e-12)


BAD = {
    "factor_1d": lambda lib: lib.linalg.lu_factor(lib.zeros(3)),
    "factor_int": lambda lib: lib.linalg.lu_factor(lib.tensor([[1, 2], [3, 4]])),
    "factor_singular": lambda lib: lib.linalg.lu_factor(lib.zeros(2, 2)),
    "factor_nopivot": lambda lib: lib.linalg.lu_factor(lib.eye(2), pivot=False),
    "solve_shape": lambda lib: lib.linalg.lu_solve(*lib.linalg.lu_factor(lib.eye(3)),
                                                   lib.ones(2, 1)),
    "solve_square": lambda lib: lib.linalg.lu_solve(*lib.linalg.lu_factor(lib.ones(2, 3)),
                                                    lib.ones(2, 1)),
    "geqrf_1d": lambda lib: lib.geqrf(lib.ones(3)),
}


@pytest.mark.oracle
@pytest.mark.parametrize("name", sorted(BAD))
def test_errors_match_torch_types(torch, name):
    mine, theirs = err(lambda: BAD[name](hookgrad)), err(lambda: BAD[name](torch))
    assert theirs is not None and mine is not None and mine[0] == theirs[0], (mine, theirs)


def test_singular_info_matches_torch(torch):
    for lib in (hookgrad, torch):
        assert lib.linalg.lu_factor_ex(lib.zeros(2, 2)).info.item() == 1
