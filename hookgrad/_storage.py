"""Storages: the memory buffer under a tensor and its views, and ``Tensor.set_``.

A hookgrad tensor's storage is the array of its view base (``t._base`` or ``t`` itself): views
share it, as in PyTorch, so ``a.untyped_storage().data_ptr() == b.untyped_storage().data_ptr()``
tells whether two tensors share memory. `UntypedStorage` counts bytes, `TypedStorage` elements.
Storages read the live array; they are not resizable (``resize_`` is not provided).

Example:
    >>> import hookgrad as torch
    >>> a = torch.arange(6.)
    >>> s = a[2:].untyped_storage()
    >>> s.nbytes(), s.data_ptr() == a.data_ptr()
    (24, True)

Mirrors: ``torch.storage``.
"""

from __future__ import annotations

import os
import warnings
from typing import Any

import numpy as np

from hookgrad._config import STATE
from hookgrad._dtypes import dtype as _dtype
from hookgrad._dtypes import from_numpy_dtype, uint8
from hookgrad._tensor import Tensor

__all__ = ["UntypedStorage", "TypedStorage", "install"]


def _base_array(t: Tensor) -> np.ndarray:
    return t._storage_data()  # NOTE [Storage arrays] in _tensor.py


def _flat(arr: np.ndarray) -> np.ndarray:
    # The buffer in memory order (a view also for a Fortran-ordered base); a non-contiguous
    # base (rare: from_numpy of a strided array) is flattened by copy, which only affects
    # element reads.
    return arr.reshape(-1, order="A")


class _StorageBase:
    __slots__ = ("_array",)

    def __init__(self, array: np.ndarray) -> None:
        self._array = array

    def data_ptr(self) -> int:
        return int(self._array.__array_interface__["data"][0])

    def nbytes(self) -> int:
        return int(self._array.nbytes)

    @property
    def device(self) -> Any:
        from hookgrad._backend import device

        return device("cpu")

    def __len__(self) -> int:
        return self.size()

    def size(self) -> int:
        raise NotImplementedError

    def _as_tensor(self, dt: _dtype, offset: int = 0, size: Any = None, stride: Any = None) -> Tensor:
        flat = _flat(self._array)
        if flat.dtype != dt.np:
            flat = flat.view(dt.np) if flat.dtype.itemsize else flat
        n = flat.shape[0] - offset
        size = (n,) if size is None else tuple(size)
        if stride is None:  # contiguous strides for `size`
            stride, acc = [], 1
            for d in reversed(size):
                stride.insert(0, acc)
                acc *= d
        span = 1 + sum((s - 1) * st for s, st in zip(size, stride)) if all(size) else 0
        if offset < 0 or offset + span > flat.shape[0]:
            raise RuntimeError(
                f"setStorage: sizes {list(size)}, strides {list(stride)}, storage offset "
                f"{offset} require more elements than the storage holds ({flat.shape[0]})")
        item = flat.itemsize
        view = np.lib.stride_tricks.as_strided(
            flat[offset:], size, tuple(st * item for st in stride), writeable=True)
        return Tensor._make(view)


class UntypedStorage(_StorageBase):
    """The bytes under a tensor and its views. Mirrors: ``torch.UntypedStorage``."""

    __slots__ = ()

    def size(self) -> int:
        return int(self._array.nbytes)

    def element_size(self) -> int:
        return 1

    def __getitem__(self, i: Any) -> Any:
        data = _flat(self._array).view(np.uint8)
        if isinstance(i, slice):  # a storage over the byte range, sharing the memory
            return UntypedStorage(data[i])
        return int(data[i])

    def tolist(self) -> list:
        return _flat(self._array).view(np.uint8).tolist()

    def untyped(self) -> UntypedStorage:
        """Itself (a TypedStorage's `untyped` gives its bytes). Mirrors: ``UntypedStorage.untyped``."""
        return self

    @classmethod
    def from_file(cls, filename: Any, shared: bool = False, nbytes: int = 0) -> UntypedStorage:
        """The first `nbytes` bytes of a file, memory-mapped: written through to the file
        when `shared`, copy-on-write otherwise (safetensors loads tensors this way).

        Mirrors: ``torch.UntypedStorage.from_file``.
        """
        path = os.fspath(filename)
        try:
            size = os.path.getsize(path)
        except OSError as e:
            mode = "read-write" if shared else "read-only"
            raise RuntimeError(f"unable to open file <{path}> in {mode} mode: {e.strerror} "
                               f"({e.errno})") from None
        if nbytes > size:
            raise RuntimeError(f"file <{path}> size <{size}> is smaller than the required "
                               f"mapping size <{nbytes}>")
        if nbytes == 0:
            return cls(np.empty((0,), dtype=np.uint8))
        mapped = np.memmap(path, dtype=np.uint8, mode="r+" if shared else "c", shape=(nbytes,))
        return cls(mapped.view(np.ndarray))  # a plain array; its base keeps the mapping open

    @property
    def dtype(self) -> _dtype:
        return uint8

    def __repr__(self) -> str:
        return f"UntypedStorage(nbytes={self.nbytes()}, device='cpu')"


class TypedStorage(_StorageBase):
    """The elements under a tensor and its views. Mirrors: ``torch.TypedStorage``."""

    __slots__ = ()

    @property
    def dtype(self) -> _dtype:
        return from_numpy_dtype(self._array.dtype)

    def size(self) -> int:
        return int(self._array.size)

    def element_size(self) -> int:
        return int(self._array.itemsize)

    def __getitem__(self, i: int) -> Any:
        return _flat(self._array)[i].item()

    def tolist(self) -> list:
        return _flat(self._array).tolist()

    def untyped(self) -> UntypedStorage:
        return UntypedStorage(self._array)

    def _untyped_storage(self) -> UntypedStorage:
        return UntypedStorage(self._array)

    def __repr__(self) -> str:
        body = " ".join(str(v) for v in self.tolist())
        return f" {body}\n[TypedStorage(dtype={self.dtype!r}, device=cpu) of size {self.size()}]"


_TYPED_WARNED = [False]
_TYPED_MSG = (
    "TypedStorage is deprecated. It will be removed in the future and UntypedStorage will be the "
    "only storage class. This should only matter to you if you are using storages directly.  To "
    "access UntypedStorage directly, use tensor.untyped_storage() instead of tensor.storage()")


def _storage(self: Tensor) -> TypedStorage:
    """``t.storage()``: warns once per process, as PyTorch does. Mirrors: ``Tensor.storage``."""
    if not _TYPED_WARNED[0]:
        _TYPED_WARNED[0] = True
        warnings.warn(_TYPED_MSG, UserWarning, stacklevel=2)
    return TypedStorage(_base_array(self))


def _untyped_storage(self: Tensor) -> UntypedStorage:
    """``t.untyped_storage()``. Mirrors: ``torch.Tensor.untyped_storage``."""
    return UntypedStorage(_base_array(self))


def _set_(self: Tensor, source: Any = None, storage_offset: int = 0, size: Any = None,
          stride: Any = None) -> Tensor:
    """Make `self` use `source`'s memory (a tensor or a storage); no source: empty.

    Data only: the new contents do not join the autograd graph. Mirrors: ``torch.Tensor.set_``.
    """
    if self._requires_grad and self._grad_fn is None and STATE.grad_enabled:
        raise RuntimeError(
            "a leaf Variable that requires grad is being used in an in-place operation.")
    store = None
    if source is None:
        new = np.empty((0,), dtype=self._data.dtype)
    elif isinstance(source, Tensor):
        store = _base_array(source)
        new = source._data if size is None else _StorageBase(store)._as_tensor(
            source.dtype, storage_offset, size, stride)._data
    elif isinstance(source, _StorageBase):
        store = source._array
        new = source._as_tensor(self.dtype, storage_offset, size, stride)._data
    else:
        raise TypeError(f"set_(): expected a Tensor or a Storage, got {type(source).__name__}")
    self._data = new
    for name in ("_base", "_view_chain", "_view_version", "_creation_meta", "_storage_array"):
        self.__dict__.pop(name, None)  # no longer a view of its old base
    if store is not None and store is not new:
        self._storage_array = store  # NOTE [Storage arrays] in _tensor.py
    self._vc().value += 1
    return self


def _is_set_to(self: Tensor, tensor: Any) -> bool:
    """Whether both tensors view one storage with equal offset, sizes and strides.

    Mirrors: ``torch.Tensor.is_set_to``.
    """
    if not isinstance(tensor, Tensor):
        raise TypeError("is_set_to(): argument 'tensor' (position 1) must be Tensor, not "
                        f"{type(tensor).__name__}")
    mine, theirs = _base_array(self), _base_array(tensor)
    same = mine is theirs or (
        UntypedStorage(mine).data_ptr() == UntypedStorage(theirs).data_ptr()
        and mine.nbytes == theirs.nbytes)
    return bool(same and self.storage_offset() == tensor.storage_offset()
                and self.shape == tensor.shape and self.stride() == tensor.stride())


def install() -> None:
    """Install ``storage``, ``untyped_storage``, ``set_`` and ``is_set_to`` on `Tensor`."""
    Tensor.is_set_to = _is_set_to  # type: ignore[attr-defined]
    Tensor.storage = _storage  # type: ignore[attr-defined]
    Tensor.untyped_storage = _untyped_storage  # type: ignore[attr-defined]
    Tensor.set_ = _set_  # type: ignore[attr-defined]
