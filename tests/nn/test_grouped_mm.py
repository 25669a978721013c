"""``F.grouped_mm`` against PyTorch (float32, its only CPU float dtype): every operand layout,
values and gradients, and the argument errors."""

from __future__ import annotations

import numpy as np
import pytest

import hookgrad
from tests._errors import err
from tests.nn._compare import to_lib

RNG = np.random.default_rng(0)


@pytest.mark.parametrize("a_shape,b_shape,offs", [((2, 4, 8), (2, 8, 4), None),
                                                  ((12, 8), (2, 8, 4), [4, 12]),
                                                  ((2, 4, 8), (8, 12), [4, 12]),
                                                  ((4, 16), (16, 4), [8, 16]),
                                                  ((12, 8), (3, 8, 4), [0, 4, 12])])
def test_matches_torch(torch, a_shape, b_shape, offs):
    a = RNG.standard_normal(a_shape).astype("float32")
    b = RNG.standard_normal(b_shape).astype("float32")
    res = []
    for lib in (torch, hookgrad):
        at, bt = to_lib(lib, a, True), to_lib(lib, b, True)
        kw = {} if offs is None else {"offs": lib.tensor(offs, dtype=lib.int32)}
        out = lib.nn.functional.grouped_mm(at, bt, **kw)
        out.backward(lib.ones_like(out))
        res.append([out.detach().numpy(), at.grad.numpy(), bt.grad.numpy()])
    for t, h in zip(*res):
        assert t.shape == h.shape and t.dtype == h.dtype
        np.testing.assert_allclose(h, t, rtol=1e-5, atol=1e-5)


def _calls(lib):
    F = lib.nn.functional
    a, b = lib.zeros(2, 4, 8), lib.zeros(2, 8, 4)
    return [
        lambda: F.grouped_mm(a.double(), b.double()),
        lambda: F.grouped_mm(a, b, bias=lib.zeros(2, 4)),
        lambda: F.grouped_mm(a, b, out_dtype=lib.float64),
        lambda: F.grouped_mm(lib.zeros(12, 8), b, offs=lib.tensor([4, 12])),
        lambda: F.grouped_mm(lib.zeros(12, 8), b),
        lambda: F.grouped_mm(lib.zeros(2, 3, 4), lib.zeros(2, 4, 5)),
    ]


def test_errors_match_torch(torch):
    for h, t in zip(_calls(hookgrad), _calls(torch)):
        assert err(h) == err(t)
