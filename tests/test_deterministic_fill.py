"""Deterministic mode fills "uninitialised" tensors as PyTorch does (``utils.deterministic``)."""

from __future__ import annotations

import importlib

import pytest

import hookgrad

pytestmark = pytest.mark.oracle


def _scenario(L):
    det = importlib.import_module(L.__name__ + ".utils.deterministic")
    out = []
    L.use_deterministic_algorithms(True)
    try:
        for dt in (L.bool, L.uint8, L.int32, L.int64, L.float16, L.bfloat16, L.float32,
                   L.float64, L.complex64):
            out.append((str(dt), L.empty(2, dtype=dt).tolist()))
        x = L.ones(2, 3)
        out += [L.empty_like(x).tolist(), x.new_empty(2).tolist(),
                L.empty_strided((2, 2), (1, 2)).tolist(), tuple(L.empty(2, 3).shape)]
        det.fill_uninitialized_memory = False
        out += [det.fill_uninitialized_memory, tuple(L.empty(2, dtype=L.int32).shape)]
    finally:
        det.fill_uninitialized_memory = True
        L.use_deterministic_algorithms(False)
    out.append(det.fill_uninitialized_memory)
    return repr(out)  # repr: NaN compares equal as text


def test_fill_matches_pytorch(torch):
    assert _scenario(hookgrad) == _scenario(torch)
