"""In-place view methods, resize, apply_/map_/map2_, as_strided_scatter, in-place special
functions, linalg method forms and removed legacy methods, against PyTorch."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import hookgrad
from tests._errors import err

X = np.arange(1.0, 7.0).reshape(2, 1, 3)


def _run(lib, fn):
    x = lib.tensor(X, dtype=lib.float64, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        y = fn(lib, x)
    w = lib.arange(y.numel(), dtype=y.dtype).reshape(y.shape) + 1
    (g,) = lib.autograd.grad((y * w).sum(), (x,))
    return (y.grad_fn.name(), tuple(y.shape), y.stride(), y._is_view(), y._version,
            y.tolist(), g.tolist())


def _squeeze_then(lib, x, f):
    y = x * 2
    f(y)
    return y


GRAD = {
    "squeeze_": lambda lib, x: _squeeze_then(lib, x, lambda y: y.squeeze_()),
    "squeeze_dim": lambda lib, x: _squeeze_then(lib, x, lambda y: y.squeeze_(1)),
    "squeeze_dims": lambda lib, x: _squeeze_then(lib, x, lambda y: y.squeeze_((1, 0))),
    "unsqueeze_": lambda lib, x: _squeeze_then(lib, x, lambda y: y.unsqueeze_(-1)),
    "transpose_": lambda lib, x: _squeeze_then(lib, x, lambda y: y.transpose_(0, 2)),
    "swapaxes_": lambda lib, x: _squeeze_then(lib, x, lambda y: y.swapaxes_(0, 1)),
    "swapdims_": lambda lib, x: _squeeze_then(lib, x, lambda y: y.swapdims_(2, 1)),
    "t_": lambda lib, x: _squeeze_then(lib, x, lambda y: y.squeeze_(1).t_()),
    "as_strided_": lambda lib, x: _squeeze_then(lib, x, lambda y: y.as_strided_((2, 2), (1, 2),
                                                                                1)),
    "view_then_unsqueeze_": lambda lib, x: (x * 2)[0].unsqueeze_(0),
    "view_unsqueeze_then_write": lambda lib, x: _write_through(lib, x),
    "resize": lambda lib, x: (x * 1).resize(3, 2),
    "resize_as": lambda lib, x: x.resize_as(lib.zeros(6)),
    "narrow_copy": lambda lib, x: x.narrow_copy(2, 1, 2),
    "pinverse": lambda lib, x: x.reshape(2, 3).pinverse(),
    "qr": lambda lib, x: x.reshape(2, 3).t().qr()[1],
    "svd_s": lambda lib, x: x.reshape(2, 3).svd()[1],
    "cholesky_solve": lambda lib, x: lib.eye(2, dtype=x.dtype).add(
        x[0, :, :2].t()).cholesky_solve(lib.tensor([[2.0, 0], [0.5, 1]], dtype=x.dtype)),
    "cholesky_inverse": lambda lib, x: (x[0, :, :2].t() @ lib.ones(1, 2, dtype=x.dtype)
                                        + lib.eye(2, dtype=x.dtype) * 3).tril().cholesky_inverse(),
    "i0_": lambda lib, x: (x * 0.5).i0_(),
    "igamma_": lambda lib, x: lib.full((2, 1, 3), 1.5, dtype=x.dtype).igamma_(x * 0.5),
    "igammac_": lambda lib, x: lib.full((2, 1, 3), 0.5, dtype=x.dtype).igammac_(x),
    "mvlgamma_": lambda lib, x: (x + 2).mvlgamma_(2),
}


def _write_through(lib, x):
    base = x * 1
    v = base[0]
    v.unsqueeze_(0)
    v.mul_(3)  # the write reaches base through the rebuilt view chain
    return base


COMPOSITES = ("as_strided_scatter", "cholesky_inverse", "cholesky_solve", "i0_", "igamma_",
              "mvlgamma_", "view_unsqueeze_then_write", "pinverse", "narrow_copy", "igammac_")


@pytest.mark.oracle
@pytest.mark.parametrize("name", sorted(GRAD))
def test_matches_torch(torch, name):
    mine, theirs = _run(hookgrad, GRAD[name]), _run(torch, GRAD[name])
    names = ("grad_fn", "shape", "stride", "is_view", "version", "value", "grad")
    for what, a, b in zip(names, mine, theirs):
        if what in ("grad_fn", "version", "stride") and name in COMPOSITES:
            continue  # composites here: PyTorch records one fused node
        if what == "version" and name in ("resize", "resize_as"):
            continue
        if what in ("value", "grad"):
            np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12, err_msg=what)
        else:
            assert a == b, what


def test_as_strided_scatter_values_src_grad_and_gradcheck(torch):
    def run(lib):
        a = lib.arange(6.0, dtype=lib.float64, requires_grad=True)
        src = lib.tensor([1.0, -2.0], dtype=lib.float64, requires_grad=True)
        out = lib.as_strided_scatter(a.reshape(2, 3), src, (2,), (2,), 1)
        (out * (lib.arange(6.0, dtype=lib.float64).reshape(2, 3) + 1)).sum().backward()
        return out.tolist(), src.grad.tolist(), a.grad.tolist()

    mine, theirs = run(hookgrad), run(torch)
    assert mine[:2] == theirs[:2]
    # PyTorch's as_strided_scatter_backward keeps the slice's gradient for `self` instead of
    # the rest (its grad for self is [0, 2, 0, 4, 0, 0] here); hookgrad gives the true one
    assert mine[2] == [1.0, 0.0, 3.0, 0.0, 5.0, 6.0]
    a = hookgrad.rand(2, 3, dtype=hookgrad.float64, requires_grad=True)
    src = hookgrad.rand(2, 2, dtype=hookgrad.float64, requires_grad=True)
    assert hookgrad.autograd.gradcheck(
        lambda u, v: hookgrad.as_strided_scatter(u, v, (2, 2), (1, 3), 1), (a, src))


VALUES = {
    "resize_shrink": lambda lib: lib.arange(6.0).resize_(2, 2),
    "resize_same": lambda lib: lib.arange(6.0).reshape(2, 3).t().resize_(3, 2),
    "resize_as_": lambda lib: lib.arange(6.0).resize_as_(lib.zeros(3, 2)),
    "resize_shares": lambda lib: _resize_shares(lib),
    "apply_": lambda lib: lib.arange(3.0).apply_(lambda v: v * 2 + 1),
    "apply_int": lambda lib: lib.arange(3).apply_(lambda v: v * 2.7),
    "map_": lambda lib: lib.arange(3.0).map_(lib.ones(1) * 2, lambda a, b: a * b),
    "map2_": lambda lib: lib.arange(3.0).map2_(lib.ones(3), lib.ones(3) * 2,
                                               lambda a, b, c: a + b * c),
    "t_plain": lambda lib: lib.zeros(2, 3).t_(),
    "as_strided_plain": lambda lib: lib.arange(6.0).as_strided_((2, 2), (2, 1), 1),
    "triangular_solve": lambda lib: lib.tensor([[1.0], [2.0]]).triangular_solve(
        lib.tensor([[2.0, 1.0], [0.0, 4.0]]))[0],
}


def _resize_shares(lib):
    a = lib.arange(6.0)
    a.resize_(2, 2)
    a[0, 0] = 9
    return a


@pytest.mark.oracle
@pytest.mark.parametrize("name", sorted(VALUES))
def test_values_match_torch(torch, name):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # triangular_solve's deprecation
        a, b = VALUES[name](hookgrad), VALUES[name](torch)
    assert (str(a.dtype).split(".")[-1], tuple(a.shape), a.tolist()) == \
        (str(b.dtype).split(".")[-1], tuple(b.shape), b.tolist())
    if name != "triangular_solve":  # an older composite: its layout is not PyTorch's yet
        assert a.stride() == b.stride()


def test_resize_grows_keeping_the_prefix():
    a = hookgrad.arange(4.0)
    a.resize_(2, 3)
    assert a.shape == (2, 3) and a.reshape(-1)[:4].tolist() == [0.0, 1.0, 2.0, 3.0]


BAD = {
    "squeeze_leaf": lambda lib: lib.zeros(2, 1, requires_grad=True).squeeze_(),
    "unsqueeze_leaf": lambda lib: lib.zeros(2, requires_grad=True).unsqueeze_(0),
    "transpose_dim": lambda lib: lib.zeros(2, 3).transpose_(0, 3),
    "t_3d": lambda lib: lib.zeros(2, 3, 4).t_(),
    "unsqueeze_dim": lambda lib: lib.zeros(2).unsqueeze_(3),
    "as_strided_oob": lambda lib: lib.zeros(4).as_strided_((3,), (2,)),
    "resize_grad": lambda lib: (lib.zeros(3, requires_grad=True) * 1).resize_(3),
    "resize_neg": lambda lib: lib.zeros(3).resize_(-1),
    "resize_numel": lambda lib: lib.zeros(2, 3).resize(4),
    "apply_grad": lambda lib: lib.zeros(3, requires_grad=True).apply_(lambda v: v),
    "apply_str": lambda lib: lib.arange(3).apply_(lambda v: "x"),
    "as_strided_scatter": lambda lib: lib.as_strided_scatter(lib.zeros(4), lib.ones(3), (2,),
                                                             (1,)),
    "solve": lambda lib: lib.eye(2).solve(lib.eye(2)),
    "lstsq": lambda lib: lib.eye(2).lstsq(lib.eye(2)),
    "symeig": lambda lib: lib.eye(2).symeig(),
    "eig": lambda lib: lib.eye(2).eig(),
    "i0_int": lambda lib: lib.tensor([1, 2]).i0_(),
}


@pytest.mark.oracle
@pytest.mark.parametrize("name", sorted(BAD))
def test_errors_match_torch_types(torch, name):
    mine, theirs = err(lambda: BAD[name](hookgrad)), err(lambda: BAD[name](torch))
    assert theirs is not None and mine is not None and mine[0] == theirs[0], (mine, theirs)
