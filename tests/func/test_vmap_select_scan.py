"""Batching rules of the select/scan primitives (kthvalue, median, cummax/cummin,
logcumsumexp, rot90, index_copy/index_fill, masked_scatter, unique, the double-backward tie):
torch.func.vmap's values (and a per-sample loop's where torch.func has no rule), no fallback."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import hookgrad

RNG = np.random.default_rng(5)
X = RNG.standard_normal((3, 4, 5))
XI = RNG.integers(-4, 5, size=(3, 4, 5))


def _run(lib, fn, args, in_dims=0):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a rule, never the per-sample loop
        out = lib.func.vmap(fn, in_dims=in_dims)(*args)
    outs = out if isinstance(out, tuple) else (out,)
    return [np.asarray(o.detach().numpy()) for o in outs]


def _loop(torch, fn, arrays, in_dims):
    """PyTorch's per-sample loop (torch.func has no masked_scatter rule)."""
    size = next(a.shape[0] for a, d in zip(arrays, in_dims) if d == 0)
    rows = [fn(*(torch.tensor(a[i] if d == 0 else a) for a, d in zip(arrays, in_dims)))
            for i in range(size)]
    return [np.stack([r.numpy() for r in rows])]


CASES = {
    "kthvalue": (lambda lib, t: lib.kthvalue(t, 2, 1), X),
    "kthvalue_keep": (lambda lib, t: lib.kthvalue(t, 3, -1, keepdim=True), X),
    "median_dim": (lambda lib, t: lib.median(t, 0), X),
    "median_dim_int": (lambda lib, t: lib.median(t, 1, keepdim=True), XI),
    "median": (lambda lib, t: lib.median(t), X),
    "median_int": (lambda lib, t: lib.median(t), XI),
    "median_0d": (lambda lib, t: lib.median(t), X[:, 0, 0]),
    "cummax": (lambda lib, t: lib.cummax(t, 1), X),
    "cummin": (lambda lib, t: lib.cummin(t, -1), XI),
    "cummax_0d": (lambda lib, t: lib.cummax(t, 0), X[:, 0, 0]),
    "logcumsumexp": (lambda lib, t: lib.logcumsumexp(t, 0), X),
    "logcumsumexp_0d": (lambda lib, t: lib.logcumsumexp(t, -1), X[:, 0, 0]),
    "rot90": (lambda lib, t: lib.rot90(t, 1, (0, 1)), X),
    "rot90_k3": (lambda lib, t: lib.rot90(t, -1, (1, -2)), X),
    "rot90_k2": (lambda lib, t: lib.rot90(t, 2, (1, 0)), X),
}


@pytest.mark.oracle
@pytest.mark.parametrize("case", sorted(CASES))
def test_select_scan_matches_torch_func(torch, case):
    fn, arr = CASES[case]
    outs = [_run(lib, lambda t, lib=lib: fn(lib, t), (lib.tensor(arr),)) for lib in (torch, hookgrad)]
    for a, b in zip(*outs):
        np.testing.assert_allclose(b, a, rtol=1e-12, atol=0)


@pytest.mark.oracle
def test_empty_sample_median_raises_as_torch(torch):
    for lib in (torch, hookgrad):
        with pytest.raises(IndexError, match="non-zero size"):
            lib.func.vmap(lib.median)(lib.zeros(3, 0))


@pytest.mark.oracle
@pytest.mark.parametrize("kw", [{}, {"dim": 0}, {"return_counts": True}])
def test_unique_is_a_dynamic_shape_error(torch, kw):
    msgs = []
    for lib in (torch, hookgrad):
        with pytest.raises(RuntimeError, match="dynamic shape") as info:
            lib.func.vmap(lambda t, lib=lib: lib.unique(t, **kw))(lib.tensor(X))
        msgs.append(str(info.value))
    assert msgs[0] == msgs[1]


IDX = np.array([[0, 3], [2, 2], [1, 0]])


@pytest.mark.oracle
@pytest.mark.parametrize("in_dims", [(0, 0, 0), (0, None, 0), (None, 0, 0), (0, 0, None)])
def test_index_copy_matches_torch_func(torch, in_dims):
    arrays = (X if in_dims[0] == 0 else X[0], IDX if in_dims[1] == 0 else IDX[0], -np.ones((3, 4, 2)) * np.arange(3)[:, None, None]
              if in_dims[2] == 0 else -np.ones((4, 2)))
    outs = [_run(lib, lambda a, i, s: a.index_copy(1, i, s),
                 tuple(lib.tensor(a) for a in arrays), in_dims) for lib in (torch, hookgrad)]
    np.testing.assert_array_equal(outs[1][0], outs[0][0])


@pytest.mark.oracle
def test_index_copy_zero_d_samples(torch):
    outs = [_run(lib, lambda a, i, s: a.index_copy(0, i, s),
                 (lib.tensor(X[:, 0, 0]), lib.tensor([[0], [0], [0]]), lib.tensor(X[:, 1, 1])))
            for lib in (torch, hookgrad)]
    np.testing.assert_array_equal(outs[1][0], outs[0][0])


@pytest.mark.oracle
@pytest.mark.parametrize("per_sample_value", [False, True])
def test_index_fill_matches_per_sample_loop(torch, per_sample_value):
    """Valid per-sample indices, negative ones included (index_fill accepts [-n, n)): the
    loop's values. torch.func's rule wraps a negative index in the merged range (it writes
    into sample 0), so the loop is the reference here."""
    idx = np.array([[0, -1], [2, -4], [1, 1]])
    val = np.array([7.0, 8.0, 9.0])
    if per_sample_value:
        fn = lambda a, i, v: a.index_fill(1, i, v)  # noqa: E731
        arrays, dims = (X, idx, val), (0, 0, 0)
    else:
        fn = lambda a, i: a.index_fill(1, i, 7.0)  # noqa: E731
        arrays, dims = (X, idx), (0, 0)
    want = _loop(torch, fn, arrays, dims)
    got = _run(hookgrad, fn, tuple(hookgrad.tensor(a) for a in arrays), dims)
    np.testing.assert_array_equal(got[0], want[0])


def test_index_fill_per_sample_out_of_range_raises():
    with pytest.raises(RuntimeError, match="out of bounds"):
        hookgrad.func.vmap(lambda a, i: a.index_fill(1, i, 7.0))(
            hookgrad.tensor(X), hookgrad.tensor([[0], [5], [-6]]))


MASK = RNG.random((3, 4, 5)) > 0.5


@pytest.mark.oracle
@pytest.mark.parametrize("in_dims", [(0, 0, 0), (0, None, 0), (None, 0, 0), (0, 0, None)])
def test_masked_scatter_matches_per_sample_loop(torch, in_dims):
    src = RNG.standard_normal((3, 20)) if in_dims[2] == 0 else RNG.standard_normal(25)
    arrays = (X if in_dims[0] == 0 else X[0], MASK if in_dims[1] == 0 else MASK[0], src)
    fn = lambda a, m, s: a.masked_scatter(m, s)  # noqa: E731
    want = _loop(torch, fn, arrays, in_dims)
    got = _run(hookgrad, fn, tuple(hookgrad.tensor(a) for a in arrays), in_dims)
    np.testing.assert_array_equal(got[0], want[0])


def test_masked_scatter_short_source_in_one_sample_raises():
    mask = np.zeros((3, 4), dtype=bool)
    mask[2] = True  # sample 2 needs 4 values, its source has 2
    with pytest.raises(RuntimeError, match="Number of elements of source"):
        hookgrad.func.vmap(lambda a, m, s: a.masked_scatter(m, s))(
            hookgrad.zeros(3, 4), hookgrad.tensor(mask), hookgrad.ones(3, 2))


@pytest.mark.oracle
def test_vmap_of_double_backward_ties(torch):
    """nll_loss's gradient under create_graph goes through the tie; vmap over it runs the rule
    and matches torch.func."""
    logp = np.log(RNG.dirichlet(np.ones(4), size=(3, 2)))
    tgt = np.array([1, 3])
    outs = []
    for lib in (torch, hookgrad):
        def f(x, lib=lib):
            g = lib.func.grad(lambda y: lib.nn.functional.nll_loss(y, lib.tensor(tgt)))(x)
            return (g * x).sum()
        outs.append(_run(lib, lib.func.grad(f), (lib.tensor(logp),)))
    np.testing.assert_allclose(outs[1][0], outs[0][0], rtol=1e-12)


GRAD_MASK = RNG.random((4, 5)) > 0.5
GRADS = {
    "cummax": lambda lib, t: lib.cummax(t, 1)[0].sum(),
    "kthvalue": lambda lib, t: lib.kthvalue(t, 2, 0)[0].sum(),
    "median": lambda lib, t: lib.median(t),
    "logcumsumexp": lambda lib, t: lib.logcumsumexp(t, 1).sum(),
    "rot90": lambda lib, t: (lib.rot90(t, 1, (0, 1)) * lib.arange(20.0).double().reshape(5, 4)).sum(),
    "index_copy": lambda lib, t: (t.index_copy(1, lib.tensor([3, 0]), t[:, :2] * 2) ** 2).sum(),
    "index_fill": lambda lib, t: (t.index_fill(1, lib.tensor([3, -1]), 0.5) ** 2).sum(),
    "masked_scatter": lambda lib, t: (t.masked_scatter(lib.tensor(GRAD_MASK), t * 3) ** 2).sum(),
}


@pytest.mark.oracle
@pytest.mark.parametrize("case", sorted(GRADS))
def test_per_sample_gradients_match_torch_func(torch, case):
    fn = GRADS[case]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch.func loops over masked_scatter (no rule)
        want = torch.func.vmap(torch.func.grad(lambda t: fn(torch, t)))(torch.tensor(X)).numpy()
    got = _run(hookgrad, hookgrad.func.grad(lambda t: fn(hookgrad, t)), (hookgrad.tensor(X),))
    np.testing.assert_allclose(got[0], want, rtol=1e-10, atol=1e-12)
