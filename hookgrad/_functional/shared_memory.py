"""``Tensor.share_memory_`` / ``is_shared``: a CPU tensor's storage in shared memory.

PyTorch moves the storage into a shared mapping, so that processes forked afterwards (Hogwild!
training with ``torch.multiprocessing``, ``Module.share_memory()``) read and write the same
numbers. hookgrad does the same with an anonymous ``MAP_SHARED`` mapping (``mmap.mmap(-1, n)``):
the tensor's array is rebound to a copy inside it. A tensor whose storage other tensors also use
(a view, or a tensor sharing a storage without being a view) keeps its private memory, since the
others would not follow the move; `is_shared` then stays False, telling the truth.

Mirrors: ``torch.Tensor.share_memory_`` and ``torch.Tensor.is_shared`` (CPU).
"""

from __future__ import annotations

import mmap

import numpy as np

from hookgrad._tensor import Tensor

__all__ = ["share_memory_", "is_shared"]


def _in_shared_mapping(array: object) -> bool:
    while isinstance(array, np.ndarray):
        array = array.base
    return isinstance(array, mmap.mmap)


def is_shared(self: Tensor) -> bool:
    """Whether the storage lies in shared memory. Mirrors: ``torch.Tensor.is_shared``."""
    data = self._storage_data()
    return isinstance(data, np.ndarray) and _in_shared_mapping(data)


def share_memory_(self: Tensor) -> Tensor:
    """Move the storage to shared memory (no-op when already there). Mirrors:
    ``torch.Tensor.share_memory_``."""
    data = self._data
    if (self._base is not None or self._storage_array is not None
            or type(data) is not np.ndarray or _in_shared_mapping(data)):
        return self
    fortran = data.flags.f_contiguous and not data.flags.c_contiguous
    if not (data.flags.c_contiguous or fortran):
        return self
    buffer = mmap.mmap(-1, max(data.nbytes, 1))
    shared = np.ndarray(data.shape, data.dtype, buffer=buffer, order="F" if fortran else "C")
    shared[...] = data
    self._data = shared
    return self
