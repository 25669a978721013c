"""Oracle tests of searchsorted, bucketize, isin, unravel_index and the deprecated range."""

from __future__ import annotations

import warnings

import pytest

import hookgrad

pytestmark = pytest.mark.oracle


def _scenarios(L):
    seq2 = L.tensor([[1.0, 3, 5], [2, 4, 6]])
    return [
        L.searchsorted(L.tensor([1.0, 3, 5, 7]), L.tensor([0.0, 3, 6, 9])),
        L.searchsorted(L.tensor([1.0, 3, 5, 7]), L.tensor([3.0, 7]), right=True),
        L.searchsorted(seq2, L.tensor([[3.0, 1], [5, 7]]), side="right"),
        L.searchsorted(L.tensor([5.0, 1, 3]), L.tensor([2.0, 4]), sorter=L.tensor([1, 2, 0])),
        L.searchsorted(L.tensor([1, 3, 5]), L.tensor([4]), out_int32=True),
        L.bucketize(L.tensor([1, 5, 9]), L.tensor([1, 3, 5, 7]), right=True),
        L.bucketize(L.tensor([[1.0, 6]]), L.tensor([1.0, 3, 5, 7])),
        L.isin(L.tensor([1, 2, 3]), L.tensor([2, 5]), invert=True),
        L.isin(L.tensor([[1.0, 2], [3, 4]]), L.tensor([4.0, 1])),
        *L.unravel_index(L.tensor([4, 7, -1]), (2, 4)),
        *L.unravel_index(L.tensor(5), 6),
        L.range(0, 2, 0.5), L.range(1, 4), L.range(3, 0, -1, dtype=L.float64),
    ]


def test_search_functions_match_pytorch(torch):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        h, t = _scenarios(hookgrad), _scenarios(torch)
    assert len(h) == len(t)
    for a, b in zip(h, t):
        assert a.tolist() == b.tolist() and tuple(a.shape) == tuple(b.shape)
        assert str(a.dtype).split(".")[-1] == str(b.dtype).split(".")[-1]


def test_errors_and_warning(torch):
    for L in (hookgrad, torch):
        with pytest.raises(RuntimeError):
            L.searchsorted(L.tensor([[1.0, 2]]), L.tensor([[1.0], [2.0]]))
        with pytest.raises(RuntimeError):
            L.searchsorted(L.tensor([1.0, 2]), L.tensor([1.0]), side="middle")
        with pytest.raises(RuntimeError):
            L.bucketize(L.tensor([1.0]), L.tensor([[1.0, 2]]))
        with pytest.raises(TypeError):
            L.unravel_index(L.tensor([1.0]), (2, 2))
        with pytest.warns(UserWarning, match="torch.range is deprecated"):
            L.range(0, 1)
