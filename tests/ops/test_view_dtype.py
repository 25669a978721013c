"""``Tensor.view(dtype)`` against PyTorch: values (bytes reinterpreted), shapes, strides, shared
memory and version counter, no autograd, and the error texts for what does not divide."""

from __future__ import annotations

import numpy as np
import pytest

import hookgrad

pytestmark = pytest.mark.oracle

CASES = [  # (source dtype, shape, target dtype, slicing applied before the view)
    ("float32", (2, 3), "int32", None), ("float32", (2, 4), "float64", None),
    ("float64", (3,), "uint8", None), ("uint8", (2, 8), "int16", None),
    ("uint8", (2, 8), "float32", None), ("int64", (4,), "float64", None),
    ("int16", (3, 4), "int8", "cols"), ("float32", (2, 3), "float32", None),
    ("uint8", (4, 8), "int32", "rows"), ("bool", (4,), "uint8", None),
]


def _source(lib, dt, shape, cut):
    data = np.arange(int(np.prod(shape)), dtype=np.float64).reshape(shape) * 1.25 + 1
    t = lib.tensor(data.astype(getattr(np, dt) if dt != "bool" else np.bool_))
    if cut == "cols":
        t = t[:, 1:3]
    elif cut == "rows":
        t = t[1:3]
    return t


def _run(lib, case):
    dt, shape, target, cut = case
    t = _source(lib, dt, shape, cut)
    v = t.view(getattr(lib, target))
    out = [v.tolist(), list(v.shape), list(v.stride()), v.storage_offset(), v.requires_grad,
           v.grad_fn is None, str(v.dtype)]
    v.add_(1) if target != "bool" else None
    out.append(t._version)
    return out


@pytest.mark.parametrize("case", CASES, ids=[f"{c[0]}-{c[2]}-{c[3]}" for c in CASES])
def test_view_dtype_matches_torch(torch, case):
    assert _run(hookgrad, case) == _run(torch, case)


def test_no_grad_through_a_dtype_view(torch):
    for lib in (hookgrad, torch):
        x = lib.arange(6.0, requires_grad=True)
        for target in (lib.int32, lib.float32):
            y = x.view(target)
            assert not y.requires_grad and y.grad_fn is None


BAD = [lambda L: L.arange(6, dtype=L.uint8).view(2, 3).view(L.int16),
       lambda L: L.arange(8, dtype=L.uint8).view(2, 4).t().view(L.int16),
       lambda L: L.arange(8, dtype=L.uint8)[1:7].view(L.int16),
       lambda L: L.tensor(5, dtype=L.int64).view(L.int32),
       lambda L: L.arange(12, dtype=L.uint8).view(3, 4)[:, :2].view(L.int32)]


@pytest.mark.parametrize("case", range(len(BAD)))
def test_view_dtype_errors_match_torch(torch, case):
    msgs = []
    for lib in (hookgrad, torch):
        with pytest.raises(RuntimeError) as info:
            BAD[case](lib)
        msgs.append(str(info.value))
    assert msgs[0] == msgs[1]
