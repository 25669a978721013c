"""More Tensor methods (unfold, fill_diagonal_, addmm_/baddbmm_, prelu, strides helpers) vs PyTorch."""

from __future__ import annotations

import numpy as np
import pytest

import hookgrad
from tests.census._both import run_both

pytestmark = pytest.mark.oracle

RNG = np.random.RandomState(0)


def _outcome(fn):
    try:
        out = fn()
    except Exception as e:  # noqa: BLE001 - the type is compared
        return type(e).__name__, str(e)
    return tuple(out.shape), tuple(out.stride()), out.tolist()


@pytest.mark.parametrize("args", [(1, 2, 1), (0, 2, 2), (-1, 4, 3), (1, 5, 1), (1, 2, 0),
                                  (0, 3, 1)])
def test_unfold_views(torch, args):
    def run(lib):
        return _outcome(lambda: lib.arange(12.0).reshape(3, 4).unfold(*args))
    assert run(hookgrad) == run(torch)


def test_unfold_zero_dim_and_grad(torch):
    assert _outcome(lambda: hookgrad.tensor(5.0).unfold(0, 1, 1)) == \
        _outcome(lambda: torch.tensor(5.0).unfold(0, 1, 1))
    run_both(torch, lambda L, t: t[0].unfold(1, 3, 2) * 2, RNG.randn(2, 7))


def test_unfold_gradcheck():
    x = hookgrad.tensor(RNG.randn(3, 6), dtype=hookgrad.float64, requires_grad=True)
    assert hookgrad.autograd.gradcheck(lambda a: a.unfold(1, 3, 1), (x,))


@pytest.mark.parametrize("shape,wrap", [((4, 4), False), ((7, 3), True), ((7, 3), False),
                                        ((3, 5), True), ((2, 2, 2), False), ((3,), False),
                                        ((2, 3, 2), False), ((4, 3), True)])
def test_fill_diagonal(torch, shape, wrap):
    def run(lib):
        return _outcome(lambda: lib.zeros(*shape).fill_diagonal_(5.0, wrap=wrap))
    assert run(hookgrad) == run(torch)


def test_inplace_ops_values_grads_and_errors(torch):
    a, m1, m2 = RNG.randn(2, 3), RNG.randn(2, 4), RNG.randn(4, 3)
    run_both(torch, lambda L, t: (t[0] * 1).addmm_(t[1], t[2], beta=0.5, alpha=2.0), a, m1, m2)
    b, b1, b2 = RNG.randn(2, 2, 3), RNG.randn(2, 2, 4), RNG.randn(2, 4, 3)
    run_both(torch, lambda L, t: (t[0] * 1).baddbmm_(t[1], t[2], alpha=0.5), b, b1, b2)
    run_both(torch, lambda L, t: (t[0] * 1).fill_diagonal_(2.0), RNG.randn(3, 3))

    def leaf(lib):
        x = lib.ones(2, 2, requires_grad=True)
        try:
            x.fill_diagonal_(0.0)
        except RuntimeError as e:
            return str(e)
    assert leaf(hookgrad) == leaf(torch)


def test_prelu_and_helpers(torch):
    run_both(torch, lambda L, t: t[0].prelu(t[1]), RNG.randn(2, 3, 4), np.array([0.1, 0.2, 0.3]))

    def run(lib):
        x = lib.arange(24.0).reshape(2, 3, 4)
        e = x.new_empty_strided((2, 3), (1, 2))
        return (x.dim_order(), x.permute(2, 0, 1).dim_order(), x.transpose(0, 1).dim_order(),
                tuple(e.shape), e.stride(), str(e.dtype), x.const_data_ptr() == x.data_ptr(),
                str(x.new_empty_strided((2,), (1,), dtype=lib.int64).dtype))
    assert run(hookgrad) == run(torch)
