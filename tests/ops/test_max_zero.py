"""relu's forward takes the maximum against a cached zero buffer (`_ops/_max_zero.py`): every
result is bit-identical to ``np.maximum(x, 0)``, for special values, chunk boundaries, layouts
and dtypes, and the relu built on it equals PyTorch's."""

from __future__ import annotations

import numpy as np
import pytest

from hookgrad._ops import _max_zero
from hookgrad._ops._max_zero import max_zero

_SPECIAL = [-0.0, 0.0, np.nan, -np.nan, np.inf, -np.inf, 1e-45, -1e-45, 5e-324, -5e-324,
            1.0, -1.0, 3.0e38, -3.0e38]


def _same_bits(a, b):
    a, b = np.ascontiguousarray(a), np.ascontiguousarray(b)
    return a.dtype == b.dtype and a.shape == b.shape and np.array_equal(
        a.view(np.uint8), b.view(np.uint8))


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64, np.int64])
@pytest.mark.parametrize("chunk", [7, 64, 1 << 14])
def test_max_zero_is_np_maximum_bit_for_bit(monkeypatch, dtype, chunk):
    monkeypatch.setattr(_max_zero, "_CHUNK", chunk)
    monkeypatch.setattr(_max_zero, "_ZEROS", {})
    rng = np.random.default_rng(chunk)
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        for n in (0, 1, 63, 64, 65, chunk - 1, chunk, chunk + 1, 3 * chunk + 5, 1000):
            x = (rng.standard_normal(n) * 10.0).astype(dtype)
            if n and dtype != np.int64:
                picks = rng.integers(0, len(_SPECIAL), n)
                spots = rng.random(n) < 0.3
                x[spots] = np.asarray(_SPECIAL, np.float64)[picks[spots]].astype(dtype)
            assert _same_bits(max_zero(x), np.maximum(x, 0))
            square = x[: (n // 4) * 4].reshape(4, -1)
            assert _same_bits(max_zero(square), np.maximum(square, 0))
            assert _same_bits(max_zero(square.T), np.maximum(square.T, 0))  # a transposed view


def test_max_zero_result_is_fresh_and_row_major():
    x = np.arange(-50.0, 50.0, dtype=np.float32).reshape(10, 10)
    out = max_zero(x)
    assert out.flags.c_contiguous and not np.shares_memory(out, x)
    assert max_zero(x[:, ::2]).tolist() == np.maximum(x[:, ::2], 0).tolist()


def test_relu_matches_torch_on_special_values():
    torch = pytest.importorskip("torch")
    import hookgrad

    vals = np.array(_SPECIAL * 20, dtype=np.float32).reshape(20, -1)
    got = hookgrad.relu(hookgrad.tensor(vals)).numpy()
    want = torch.relu(torch.tensor(vals)).numpy()
    # PyTorch keeps -0.0 (its vectorised max returns the operand); NumPy's maximum, scalar or
    # not, gives +0.0: equal values, the sign of zero aside
    assert np.array_equal(got, want, equal_nan=True)
