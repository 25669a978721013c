"""``rand_like`` / ``randn_like`` of 0-dim tensors (pyro's init_to_uniform draws them)."""

from __future__ import annotations

import pytest

import hookgrad


@pytest.mark.parametrize("name", ["rand_like", "randn_like"])
@pytest.mark.parametrize("shape", [(), (0,), (2, 3)])
def test_like_keeps_the_shape_and_dtype(torch, name, shape):
    for L in (torch, hookgrad):
        x = L.zeros(shape, dtype=L.float64)
        y = getattr(L, name)(x)
        assert tuple(y.shape) == shape and y.dtype == L.float64
