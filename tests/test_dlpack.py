"""DLPack exchange (``torch.utils.dlpack``, ``torch.from_dlpack``, ``Tensor.__dlpack__``)
against PyTorch: memory sharing both ways, strides, one-shot capsules and the error types."""

from __future__ import annotations

import numpy as np
import pytest

import hookgrad


def test_numpy_import_shares_memory_and_strides_as_torch(torch):
    base = np.arange(12.0).reshape(3, 4)
    for src in (base, base.T, base[:, ::2]):
        ours, theirs = hookgrad.from_dlpack(src), torch.from_dlpack(src)
        assert ours.shape == tuple(theirs.shape) and ours.stride() == theirs.stride()
        assert str(ours.dtype) == str(theirs.dtype)
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
    shared = np.zeros(3, dtype=np.float32)
    t = hookgrad.from_dlpack(shared)
    shared[1] = 7.0
    assert t.tolist() == [0.0, 7.0, 0.0]
    t.add_(1)
    assert shared.tolist() == [1.0, 8.0, 1.0]


def test_capsule_round_trip_and_second_use_raise_as_torch(torch):
    for lib in (hookgrad, torch):
        x = lib.arange(6.0).reshape(2, 3).t()
        cap = lib.utils.dlpack.to_dlpack(x)
        y = lib.utils.dlpack.from_dlpack(cap)
        assert y.tolist() == x.tolist() and y.stride() == x.stride()
        y[0, 0] = 100.0
        assert x[0, 0].item() == 100.0
        with pytest.raises(RuntimeError, match="consumed only once"):
            lib.utils.dlpack.from_dlpack(cap)


def test_export_to_numpy_and_between_libraries(torch):
    h = hookgrad.arange(5, dtype=hookgrad.int32)
    a = np.from_dlpack(h)
    a[0] = 42
    assert h[0].item() == 42
    assert h.__dlpack_device__() == torch.arange(2).__dlpack_device__()
    t = torch.from_dlpack(hookgrad.ones(2, 3).t())
    assert t.stride() == (1, 3)
    back = hookgrad.from_dlpack(torch.full((2,), 3.0))
    assert back.tolist() == [3.0, 3.0]


def test_requires_grad_export_raises_buffer_error_as_torch(torch):
    for lib in (hookgrad, torch):
        with pytest.raises(BufferError, match="require gradient"):
            lib.ones(2, requires_grad=True).__dlpack__()
    assert list(hookgrad.utils.dlpack.DLDeviceType) and \
        int(hookgrad.utils.dlpack.DLDeviceType.kDLCPU) == int(torch.utils.dlpack.DLDeviceType.kDLCPU)
