"""``torch.embedding_bag`` (ATen's form and its auxiliary outputs) against PyTorch: output,
weight gradient, ``offset2bag`` (empty on ATen's fast sum path), ``bag_size`` and
``max_indices`` for every mode, dtype, empty bags and ``padding_idx``."""

from __future__ import annotations

import numpy as np
import pytest

import hookgrad
from tests._errors import err
from tests.nn._compare import to_lib

W = np.random.default_rng(0).standard_normal((10, 3))
INDICES = np.array([1, 2, 4, 5, 4, 3, 2, 9, 4])


@pytest.mark.parametrize("offsets", [[0, 4, 4], [0, 3, 9], [0, 0, 2, 5]])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("mode", [0, 1, 2])
@pytest.mark.parametrize("padding_idx", [None, 4, -6])
def test_matches_torch(torch, offsets, dtype, mode, padding_idx):
    res = []
    for lib in (torch, hookgrad):
        w = to_lib(lib, W.astype(dtype), True)
        out = lib.embedding_bag(w, to_lib(lib, INDICES), to_lib(lib, np.array(offsets)), False,
                                mode, False, None, False, padding_idx)
        out[0].sum().backward()
        res.append([o.detach().numpy() for o in out] + [w.grad.numpy()])
    for a, b in zip(*res):
        assert a.shape == b.shape and a.dtype == b.dtype
        np.testing.assert_allclose(b, a, rtol=1e-6, atol=1e-6)


def test_offsets_required(torch):
    for lib in (torch, hookgrad):
        assert err(lambda: lib.embedding_bag(lib.ones(3, 2), lib.tensor([0, 1]), None))[0] == (
            "TypeError")
