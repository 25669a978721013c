"""Ties and NaN in value-selecting ops: indices and gradients must be PyTorch's.

Full ``max()``/``amax`` spread the gradient evenly over ties, ``max(dim)`` picks the first index
(the first NaN if any), ``sort`` is stable, the inf-norm shares like ``amax``.
"""

from __future__ import annotations

import numpy as np
import pytest

import hookgrad

pytestmark = pytest.mark.oracle

_TIED = [[3.0, 1.0, 3.0, 2.0, 3.0, 1.0], [0.5, 0.5, -1.0, 0.5, -1.0, 2.0]]
_NAN = [[1.0, float("nan"), 3.0, float("nan")], [2.0, 2.0, -1.0, 0.0]]


def _np(t):
    return np.asarray(t.detach().numpy() if hasattr(t, "detach") else t, dtype=float)


def _run(lib, data, fn):
    x = lib.tensor(data, requires_grad=True)
    out = fn(lib, x)
    if isinstance(out, tuple):
        values, indices = out
        extra = _np(indices)
    else:
        values, extra = out, None
    weights = lib.tensor(np.arange(1.0, 1.0 + values.numel()).reshape(tuple(values.shape)))
    (values * weights).sum().backward()
    return _np(values), extra, _np(x.grad)


_CASES = {
    "max_full": lambda lib, x: x.max(),
    "min_full": lambda lib, x: x.min(),
    "amax_full": lambda lib, x: x.amax(),
    "amax_dim": lambda lib, x: x.amax(1),
    "amin_dims_keepdim": lambda lib, x: x.amin((0, 1), keepdim=True),
    "max_dim": lambda lib, x: tuple(x.max(1)),
    "min_dim": lambda lib, x: tuple(x.min(1)),
    "max_dim0_keepdim": lambda lib, x: tuple(x.max(0, keepdim=True)),
    "sort": lambda lib, x: tuple(x.sort(1)),
    "sort_desc": lambda lib, x: tuple(x.sort(1, descending=True)),
    "sort_stable_desc": lambda lib, x: tuple(lib.sort(x, dim=1, descending=True, stable=True)),
    "topk_largest": lambda lib, x: tuple(x.topk(3)),
    "topk_smallest": lambda lib, x: tuple(x.topk(2, largest=False)),
    "topk_unsorted": lambda lib, x: tuple(x.topk(4, sorted=False)),
    "argsort": lambda lib, x: (x * 1, x.argsort(1)),
    "norm_inf": lambda lib, x: x.norm(float("inf"), dim=1),
    "norm_neg_inf": lambda lib, x: x.norm(float("-inf")),
    "argmax": lambda lib, x: (x * 1, x.argmax(1)),
    "argmin": lambda lib, x: (x * 1, x.argmin()),
}


@pytest.mark.parametrize("name", sorted(_CASES))
def test_ties_match_torch(torch, name):
    vt, it, gt = _run(torch, _TIED, _CASES[name])
    vh, ih, gh = _run(hookgrad, _TIED, _CASES[name])
    np.testing.assert_allclose(vh, vt)
    if it is not None:
        np.testing.assert_array_equal(ih, it)
    np.testing.assert_allclose(gh, gt, rtol=1e-6)


_NAN_CASES = ["max_full", "amax_dim", "max_dim", "min_dim", "sort", "sort_desc", "argmax",
              "argmin", "min_full"]


@pytest.mark.parametrize("name", _NAN_CASES)
def test_nan_matches_torch(torch, name):
    vt, it, gt = _run(torch, _NAN, _CASES[name])
    vh, ih, gh = _run(hookgrad, _NAN, _CASES[name])
    np.testing.assert_allclose(vh, vt, equal_nan=True)
    if it is not None:
        np.testing.assert_array_equal(ih, it)
    np.testing.assert_allclose(gh, gt, rtol=1e-6, equal_nan=True)


def test_topk_without_ties_matches_torch(torch):
    data = np.random.default_rng(0).permutation(20).reshape(4, 5).astype(float)
    for kw in ({"k": 3}, {"k": 2, "dim": 0, "largest": False}, {"k": 5, "sorted": True}):
        vt, it, gt = _run(torch, data, lambda lib, x, kw=kw: tuple(x.topk(**kw)))
        vh, ih, gh = _run(hookgrad, data, lambda lib, x, kw=kw: tuple(x.topk(**kw)))
        np.testing.assert_allclose(vh, vt)
        np.testing.assert_array_equal(ih, it)
        np.testing.assert_allclose(gh, gt)


@pytest.mark.parametrize("seed", range(4))
def test_tie_order_of_long_rows_matches_torch(torch, seed):
    """Beyond 16 elements PyTorch's sort is std::sort (unstable) and topk uses nth_element or
    partial_sort: hookgrad replays those algorithms on rows with ties (NOTE [Tie order])."""
    rng = np.random.default_rng(seed)
    data = rng.integers(0, 4, size=(3, 70)).astype(float)
    data[0, rng.integers(0, 70, size=5)] = float("nan")
    cases = [lambda lib, x: tuple(x.sort(1)), lambda lib, x: tuple(x.sort(0, descending=True)),
             lambda lib, x: tuple(x.topk(9, 1)), lambda lib, x: tuple(x.topk(1, 1, largest=False)),
             lambda lib, x: tuple(x.topk(20, 1, sorted=False))]
    for fn in cases:
        vt, it, gt = _run(torch, data, fn)
        vh, ih, gh = _run(hookgrad, data, fn)
        np.testing.assert_allclose(vh, vt, equal_nan=True)
        np.testing.assert_array_equal(ih, it)
        np.testing.assert_allclose(gh, gt)


def test_zero_inputs_of_products_match_torch(torch):
    """prod/cumprod gradients at exact zeros (PyTorch's zero-safe formulas), incl. 2nd order."""
    data = [[2.0, 0.0, -1.5, 3.0], [0.0, 1.5, 0.0, 2.0], [1.0, -2.0, 0.5, 0.0]]

    def run(lib, op):
        x = lib.tensor(data, requires_grad=True)
        y = op(x)
        (g,) = lib.autograd.grad(y.sum(), x, create_graph=True)
        (gg,) = lib.autograd.grad((g * g).sum(), x)
        x2 = lib.tensor(data, requires_grad=True)
        op(x2).sum().backward()  # the raw (no create_graph) path
        return _np(g), _np(gg), _np(x2.grad)

    for op in (lambda x: x.prod(), lambda x: x.prod(1), lambda x: x.cumprod(1),
               lambda x: x.prod(0, keepdim=True), lambda x: x[1].prod()):
        for a, b in zip(run(torch, op), run(hookgrad, op)):
            np.testing.assert_allclose(b, a, rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("p", [0.5, 1, 1.5, 2, 3, float("inf")])
def test_norm_gradient_at_zero_vector_matches_torch(torch, p):
    def run(lib):
        x = lib.tensor([[0.0, 0.0], [1.0, -2.0]], requires_grad=True)
        x.norm(p, dim=1).sum().backward()
        return _np(x.grad)

    np.testing.assert_allclose(run(hookgrad), run(torch), rtol=1e-6, equal_nan=True)


def test_norm_p0_gives_no_gradient(torch):
    for lib in (torch, hookgrad):
        x = lib.tensor([1.0, 0.0, 2.0], requires_grad=True)
        x.norm(0).backward()
        assert x.grad is None


def test_std_of_constant_has_zero_gradient(torch):
    def run(lib):
        x = lib.ones(2, 3, requires_grad=True)
        (g,) = lib.autograd.grad(x.std(1).sum(), x, create_graph=True)
        return _np(g)

    np.testing.assert_array_equal(run(hookgrad), run(torch))
