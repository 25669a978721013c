"""nonzero, unique, bincount, meshgrid, diag, trace, repeat_interleave and the runtime/cuda
queries against PyTorch."""

from __future__ import annotations

import numpy as np
import pytest

import hookgrad
from tests._errors import err

A = np.array([[0.0, 1.5, -2.0], [3.0, 0.0, 1.5]])
INTS = np.array([3, 1, 3, 0, 1, 5])


def _out(x):
    if isinstance(x, tuple):
        return tuple(_out(e) for e in x)
    return (str(x.dtype).replace("torch.", ""), tuple(x.shape), x.detach().numpy().tolist())


CASES = {
    "nonzero": lambda lib: lib.nonzero(lib.tensor(A)),
    "nonzero_tuple": lambda lib: lib.nonzero(lib.tensor(A), as_tuple=True),
    "nonzero_method": lambda lib: lib.tensor(INTS).nonzero(),
    "unique": lambda lib: lib.unique(lib.tensor(INTS)),
    "unique_inv_counts": lambda lib: lib.unique(lib.tensor(INTS), return_inverse=True,
                                                return_counts=True),
    "unique_float": lambda lib: lib.tensor(A).unique(),
    "unique_dim": lambda lib: lib.unique(lib.tensor([[1, 2], [1, 2], [0, 3]]), dim=0),
    "bincount": lambda lib: lib.bincount(lib.tensor(INTS)),
    "bincount_minlength": lambda lib: lib.bincount(lib.tensor(INTS), minlength=9),
    "bincount_weights": lambda lib: lib.bincount(lib.tensor(INTS),
                                                 weights=lib.tensor(np.arange(6.0))),
    "trace_int": lambda lib: lib.tensor([[1, 2], [3, 4]]).trace(),
    "repeat_interleave_counts": lambda lib: lib.repeat_interleave(lib.tensor([2, 0, 1])),
    "type_as": lambda lib: lib.tensor([1.5, 2.0]).type_as(lib.tensor([1])),
    "diff_int_dim0": lambda lib: lib.diff(lib.tensor([[1, 2, 4], [0, 5, 5]]), dim=0),
    "conj_real": lambda lib: lib.tensor([1.0, -2.0]).conj(),
    # the grids themselves, with unequal lengths, so a transposed grid cannot pass
    "meshgrid_xy_values": lambda lib: lib.meshgrid(lib.arange(3), lib.arange(2), indexing="xy"),
    "meshgrid_xy_3": lambda lib: lib.meshgrid(lib.arange(3), lib.arange(2), lib.arange(4),
                                              indexing="xy"),
    "meshgrid_ij_values": lambda lib: lib.meshgrid(lib.arange(3), lib.arange(2), indexing="ij"),
}


@pytest.mark.oracle
@pytest.mark.parametrize("name", sorted(CASES))
def test_values_and_dtypes_match_torch(torch, name):
    assert _out(CASES[name](hookgrad)) == _out(CASES[name](torch))


GRAD_CASES = {
    "meshgrid_ij": lambda lib, x, y: sum(g.sum() * (i + 1) for i, g in enumerate(
        lib.meshgrid(x, y, indexing="ij"))),
    "meshgrid_xy": lambda lib, x, y: sum((g * g).sum() * (i + 2) for i, g in enumerate(
        lib.meshgrid(x, y, indexing="xy"))),
    "diag_vec": lambda lib, x, y: (lib.diag(x) * lib.diag(x)).sum() + lib.diag(y, 1).sum(),
    "diag_vec_neg": lambda lib, x, y: (lib.diag(y, -2) ** 2).sum(),
    "diag_mat": lambda lib, x, y: lib.diag(lib.outer(x, y), -1).pow(2).sum(),
    "trace": lambda lib, x, y: lib.trace(lib.outer(x, x)) * 3,
    "diff": lambda lib, x, y: (lib.diff(y, n=2) ** 2).sum() + x.diff(prepend=y[:1]).pow(3).sum(),
    "sgn": lambda lib, x, y: (x.sgn() * x).sum(),
    "repeat_interleave": lambda lib, x, y: (lib.repeat_interleave(x, 2) ** 2).sum()
    + (y.repeat_interleave(lib.tensor([1, 0, 3, 1]), dim=0) ** 3).sum(),
}


@pytest.mark.oracle
@pytest.mark.parametrize("name", sorted(GRAD_CASES))
def test_composites_have_torch_gradients(torch, name):
    def run(lib):
        x = lib.tensor([0.5, -1.0, 2.0], requires_grad=True)
        y = lib.tensor([1.0, 2.0, -0.5, 3.0], requires_grad=True)
        out = GRAD_CASES[name](lib, x, y)
        gx, gy = lib.autograd.grad(out, (x, y), allow_unused=True, materialize_grads=True)
        return out.item(), gx.tolist(), gy.tolist()

    mine, theirs = run(hookgrad), run(torch)
    np.testing.assert_allclose(mine[0], theirs[0], rtol=1e-6)
    for a, b in zip(mine[1:], theirs[1:]):
        np.testing.assert_allclose(a, b, rtol=1e-6)


def _errors(lib):
    return [
        err(lambda: lib.bincount(lib.tensor([-1, 2]))),
        err(lambda: lib.diag(lib.ones(2, 2, 2))),
        err(lambda: lib.meshgrid(lib.ones(2), indexing="bad")),
        err(lambda: lib.ones(2).cuda()),
    ]


@pytest.mark.oracle
def test_error_types_match_torch(torch):
    assert [e[0] if e else None for e in _errors(hookgrad)] == [
        e[0] if e else None for e in _errors(torch)]


def test_runtime_switches_and_cuda_queries():
    hookgrad.set_num_threads(1)
    assert hookgrad.get_num_threads() == 1
    hookgrad.use_deterministic_algorithms(True)
    assert hookgrad.are_deterministic_algorithms_enabled()
    hookgrad.use_deterministic_algorithms(False)
    assert isinstance(hookgrad.cuda.is_available(), bool)
    assert hookgrad.cuda.device_count() >= 0
    with pytest.raises(RuntimeError):
        hookgrad.set_num_threads(0)
    hookgrad.backends.cudnn.benchmark = True  # scripts set these; they must simply exist
    hookgrad.backends.cudnn.deterministic = True
    hookgrad.backends.cudnn.benchmark = False  # PyTorch's defaults again: later tests compare
    hookgrad.backends.cudnn.deterministic = False
    assert hookgrad.backends.cudnn.is_available() is False
    assert hookgrad.backends.mps.is_available() is False


def test_trapezoid_constant_spacing_is_pytorchs_formula(torch):
    # (sum - (first + last) / 2) * dx: an infinite end gives nan, as PyTorch's does
    for y in ([1.0, 2.0, float("inf")], [1.0, float("inf"), 2.0], [3.0], [0.5, -1.0, 2.0, 4.0]):
        for kw in ({}, {"dx": 0.5}):
            got, want = (lib.trapezoid(lib.tensor(y, requires_grad=True), **kw)
                         for lib in (hookgrad, torch))
            assert str(got.item()) == str(want.item())
            yh = hookgrad.tensor(y, requires_grad=True)
            yt = torch.tensor(y, requires_grad=True)
            gh = hookgrad.autograd.grad(hookgrad.trapezoid(yh, **kw), yh)[0].tolist()
            assert gh == torch.autograd.grad(torch.trapezoid(yt, **kw), yt)[0].tolist()
