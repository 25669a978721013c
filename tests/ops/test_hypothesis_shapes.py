"""Hypothesis-generated shapes (broadcasting pairs, zero-size dims) for the core op families.

Properties: values and gradients equal PyTorch's for random broadcastable shapes, and the VJP of
a broadcasting op always returns each input's own shape (architecture.md §7.4).
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import hookgrad
from tests.conftest import load_torch


@pytest.fixture(scope="module")
def torch_mod():
    """Module-scoped oracle: hypothesis re-runs the test body, not the fixture."""
    return load_torch()


dims = st.integers(min_value=0, max_value=3)


@st.composite
def broadcast_pair(draw):
    """Two shapes that broadcast together, zero-size dims included."""
    ndim = draw(st.integers(min_value=0, max_value=3))
    full = [draw(dims) for _ in range(ndim)]
    a, b = [], []
    for d in full:
        a.append(d if draw(st.booleans()) else 1)
        b.append(d if draw(st.booleans()) else 1)
    a = a[draw(st.integers(min_value=0, max_value=ndim)):]
    return tuple(a), tuple(b)


BINARY = {
    "add": lambda lib, x, y: x + y,
    "sub": lambda lib, x, y: x - y,
    "mul": lambda lib, x, y: x * y,
    "div": lambda lib, x, y: x / (y.abs() + 1),
    "maximum": lambda lib, x, y: lib.maximum(x, y),
    "atan2": lambda lib, x, y: lib.atan2(x, y + 3),
    "where": lambda lib, x, y: lib.where(x > 0, x, y),
    "lerp": lambda lib, x, y: lib.lerp(x, y, 0.3),
}


def _run(lib, name, a, b):
    x = lib.tensor(a, requires_grad=True)
    y = lib.tensor(b, requires_grad=True)
    out = BINARY[name](lib, x, y)
    if out.numel() == 0:
        return out.shape, None, None
    gx, gy = lib.autograd.grad((out * out).sum(), (x, y), allow_unused=True)
    return tuple(out.shape), gx.detach().numpy(), gy.detach().numpy()


@pytest.mark.oracle
@pytest.mark.parametrize("name", sorted(BINARY))
@given(shapes=broadcast_pair(), seed=st.integers(0, 2**16))
def test_broadcasting_binary_ops_match_torch(torch_mod, name, shapes, seed):
    rng = np.random.default_rng(seed)
    a = rng.uniform(-2, 2, size=shapes[0])
    b = rng.uniform(-2, 2, size=shapes[1])
    mine = _run(hookgrad, name, a, b)
    theirs = _run(torch_mod, name, a, b)
    assert tuple(mine[0]) == tuple(theirs[0])
    for g_mine, g_theirs, shape in zip(mine[1:], theirs[1:], shapes):
        if g_theirs is None:
            continue
        assert g_mine.shape == shape  # the VJP undoes broadcasting to the input's own shape
        np.testing.assert_allclose(g_mine, g_theirs, rtol=1e-10, atol=1e-12)


REDUCE = {
    "sum": lambda lib, x, d: x.sum(d),
    "mean": lambda lib, x, d: x.mean(d),
    "amax": lambda lib, x, d: x.amax(d),
    "logsumexp": lambda lib, x, d: lib.logsumexp(x, d),
    "softmax": lambda lib, x, d: lib.softmax(x, d),
    "cumsum": lambda lib, x, d: x.cumsum(d),
}


@pytest.mark.oracle
@pytest.mark.parametrize("name", sorted(REDUCE))
@given(shape=st.lists(st.integers(1, 3), min_size=1, max_size=3), data=st.data())
def test_reductions_over_random_dims_match_torch(torch_mod, name, shape, data):
    dim = data.draw(st.integers(-len(shape), len(shape) - 1))
    arr = np.random.default_rng(len(shape) + dim).uniform(-2, 2, size=shape)

    def run(lib):
        x = lib.tensor(arr, requires_grad=True)
        out = REDUCE[name](lib, x, dim)
        (g,) = lib.autograd.grad((out * out).sum(), x)
        return out.detach().numpy(), g.numpy()

    for m, t in zip(run(hookgrad), run(torch_mod)):
        np.testing.assert_allclose(m, t, rtol=1e-10, atol=1e-12)
