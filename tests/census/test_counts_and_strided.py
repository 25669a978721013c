"""``poisson``/``binomial`` (valid samples, seeding, nodes and errors as PyTorch's) and the
strided census ops ``as_strided_copy``/``slice_inverse`` (values and gradients equal PyTorch's)."""

from __future__ import annotations

import numpy as np
import pytest

import hookgrad
from tests.census._both import error_of

pytestmark = pytest.mark.oracle




def test_poisson_samples_are_valid_seeded_counts():
    rate = hookgrad.tensor([[0.0, 0.5, 3.0], [10.0, 40.0, 1.0]], dtype=hookgrad.float64)
    hookgrad.manual_seed(3)
    a = hookgrad.poisson(rate)
    hookgrad.manual_seed(3)
    b = hookgrad.poisson(rate)
    assert a.dtype == hookgrad.float64 and a.shape == rate.shape and a.tolist() == b.tolist()
    vals = np.array(a.tolist())
    assert (vals >= 0).all() and (vals == np.round(vals)).all() and vals[0, 0] == 0
    many = np.array(hookgrad.poisson(hookgrad.full((20000,), 4.0)).tolist())
    assert abs(many.mean() - 4.0) < 0.1 and abs(many.var() - 4.0) < 0.3
    g = hookgrad.Generator().manual_seed(7)
    h = hookgrad.Generator().manual_seed(7)
    assert hookgrad.poisson(rate, g).tolist() == hookgrad.poisson(rate, generator=h).tolist()


def test_binomial_samples_are_valid_seeded_counts():
    n = hookgrad.tensor([[5.0, 0.0, 20.0], [3.0, 8.0, 100.0]])
    p = hookgrad.tensor([0.3, 0.9, 0.5])
    hookgrad.manual_seed(5)
    a = hookgrad.binomial(n, p)
    hookgrad.manual_seed(5)
    assert a.tolist() == hookgrad.binomial(n, p).tolist()
    vals, nn = np.array(a.tolist()), np.array(n.tolist())
    assert a.dtype == hookgrad.float32 and (vals >= 0).all() and (vals <= nn).all()
    assert (vals == np.round(vals)).all()
    many = np.array(hookgrad.binomial(hookgrad.full((20000,), 10.0),
                                      hookgrad.full((20000,), 0.25)).tolist())
    assert abs(many.mean() - 2.5) < 0.06


def test_counts_record_pytorchs_nodes_and_edge_cases(torch):
    def scenario(L):
        rate = L.tensor([1.0, 2.0], requires_grad=True)
        draws = L.poisson(rate * 2)
        draws.sum().backward()
        count, prob = L.tensor([20.0, 30.0]), L.tensor([1.0, 0.0], requires_grad=True)
        b = L.binomial(count, prob)
        return (type(draws.grad_fn).__name__, draws.requires_grad, rate.grad.tolist(),
                type(b.grad_fn).__name__, b.tolist(), error_of(lambda: b.sum().backward()),
                L.binomial(L.tensor([-2.0, 2.0]), L.tensor([0.5, -0.5])).tolist(),
                L.binomial(L.tensor([[4.0, 6.0], [4.0, 6.0]]), L.tensor([[1.0], [0.0]])).tolist(),
                L.poisson(L.zeros(3)).tolist(), tuple(L.poisson(L.ones(0, 2)).shape),
                L.poisson(L.tensor(2.0)).dim())
    assert scenario(hookgrad) == scenario(torch)


@pytest.mark.parametrize("call", [
    lambda L: L.poisson(L.tensor([-1.0])),
    lambda L: L.poisson(L.tensor([1, 2])),
    lambda L: L.binomial(L.tensor([2]), L.tensor([0.5])),
    lambda L: L.binomial(L.tensor([2.0]), L.tensor([1])),
    lambda L: L.binomial(L.tensor([2.0]), L.tensor([0.5], dtype=L.float64)),
])
def test_count_errors_follow_pytorch(torch, call):
    assert error_of(lambda: call(hookgrad)) == error_of(lambda: call(torch))


def test_as_strided_copy_and_slice_inverse_equal_pytorch(torch):
    def scenario(L):
        x = L.arange(6.0, requires_grad=True)
        y = L.as_strided_copy(x, (2, 2), (1, 2), 1)
        (y * L.tensor([[1.0, 2.0], [3.0, 4.0]])).sum().backward()
        s = L.arange(10.0) * 1
        v = s[2:8:2].detach().requires_grad_()
        z = L.slice_inverse(v, s, 0, 2, 8, 2)
        (z * L.arange(10.0)).sum().backward()
        return (y.tolist(), y.is_contiguous(), y._base is None, x.grad.tolist(), z.tolist(),
                z._base is v, v.grad.tolist(), v.slice_inverse(s, 0, 2, 8, 2).tolist(),
                error_of(lambda: L.slice_inverse(L.ones(3), L.zeros(10), 0, 2, 8, 2))[0])
    assert scenario(hookgrad) == scenario(torch)


def test_seeded_counts_equal_pytorchs(torch):
    def draw(lib):
        lib.manual_seed(0)
        rates = lib.tensor([0.5, 3.0, 12.0, 55.5, 0.0])
        counts = lib.tensor([10.0, 100.0, 7.5, -2.0, 50.0])
        probs = lib.tensor([0.3, 0.4, 0.5, 0.5, 1.2])
        return (lib.poisson(rates).tolist(), lib.binomial(counts, probs).tolist(),
                lib.binomial(counts.double(), probs.double()).tolist(), lib.rand(2).tolist())

    assert draw(hookgrad) == draw(torch)
