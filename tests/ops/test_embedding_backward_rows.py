"""Embedding's backward sums gradient rows through flat indices (`_ops/_add_at.py`): every
weight gradient is bit-identical to ``np.add.at`` on rows (and so to PyTorch's sequential
``index_add_``), for repeated indices, chunked index building, non-finite values and bad rows."""

from __future__ import annotations

import numpy as np
import pytest

from hookgrad._ops import _add_at
from hookgrad._ops._add_at import add_rows_at


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
@pytest.mark.parametrize("chunk", [1, 7, 1 << 18])
def test_add_rows_at_is_add_at_bit_for_bit(monkeypatch, dtype, chunk):
    monkeypatch.setattr(_add_at, "_CHUNK", chunk)
    rng = np.random.default_rng(chunk)
    for _ in range(40):
        v, d, n = (int(k) for k in rng.integers(1, 30, 3))
        rows = rng.integers(0, v, n * 3)
        values = (rng.standard_normal((n * 3, d)) * 10.0 ** rng.integers(-4, 4, (n * 3, d)))
        values = values.astype(dtype)
        values[rng.integers(0, n * 3)] = [np.nan, -np.inf, np.inf, -0.0][int(rng.integers(4))]
        ref = np.zeros((v, d), dtype)
        np.add.at(ref, rows, values)
        out = np.zeros((v, d), dtype)
        add_rows_at(out, rows, values)
        assert np.array_equal(ref, out, equal_nan=True)
        assert np.array_equal(np.signbit(ref), np.signbit(out))


def test_add_rows_at_keeps_add_at_errors_and_wraparound():
    with pytest.raises(IndexError):
        add_rows_at(np.zeros((3, 2)), np.array([3]), np.ones((1, 2)))
    out = np.zeros((3, 2))
    add_rows_at(out, np.array([-1, 0]), np.arange(4.0).reshape(2, 2))
    assert out.tolist() == [[2.0, 3.0], [0.0, 0.0], [0.0, 1.0]]


@pytest.mark.oracle
def test_embedding_weight_grad_matches_torch_exactly(torch):
    import hookgrad

    rng = np.random.default_rng(0)
    weight = rng.standard_normal((65, 16)).astype(np.float32)
    idx = rng.integers(0, 65, (12, 64))
    grad = rng.standard_normal((12, 64, 16)).astype(np.float32)
    grads = []
    for lib in (hookgrad, torch):
        w = lib.tensor(weight).requires_grad_(True)
        lib.nn.functional.embedding(lib.tensor(idx), w, padding_idx=3).backward(
            lib.tensor(grad))
        grads.append(w.grad.numpy())
    np.testing.assert_array_equal(*grads)
