"""Checkpoints of complex and wide unsigned tensors, both ways between PyTorch and hookgrad."""

from __future__ import annotations

import io

import numpy as np

import hookgrad


def _tensors(lib):
    return {"c64": lib.tensor([1 + 2j, -3j]), "c128": lib.tensor([0.5j], dtype=lib.complex128),
            "u16": lib.tensor([1, 65535], dtype=lib.uint16),
            "u64": lib.tensor([2**64 - 1, 7], dtype=lib.uint64)[1:],
            "u32": lib.tensor([[1, 2], [3, 4]], dtype=lib.uint32).t()}


def _same(a, b):
    for k in a:
        assert str(a[k].dtype) == str(b[k].dtype), k
        assert a[k].shape == b[k].shape and tuple(a[k].stride()) == tuple(b[k].stride()), k
        np.testing.assert_array_equal(np.asarray(a[k].numpy()), np.asarray(b[k].numpy()))


def test_torch_checkpoint_loads_in_hookgrad(torch):
    buf = io.BytesIO()
    torch.save(_tensors(torch), buf)
    buf.seek(0)
    _same(hookgrad.load(buf), _tensors(torch))


def test_hookgrad_checkpoint_loads_in_torch(torch):
    buf = io.BytesIO()
    hookgrad.save(_tensors(hookgrad), buf)
    buf.seek(0)
    _same(torch.load(buf), _tensors(torch))
    buf.seek(0)
    _same(hookgrad.load(buf), _tensors(hookgrad))
