"""The array-namespace seam: NumPy for ``cpu``; CuPy for ``cuda`` when it is installed.

Layer 1. Every array operation that is not a ufunc call on an existing array asks
`namespace_of` (or `namespace_for`) for the module to use, so no rule hard-wires ``np.``.
NumPy ufuncs called on CuPy arrays dispatch to CuPy through ``__array_ufunc__``, which is why
op impls may be written as ``np.exp`` and still run on either backend.
"""

from __future__ import annotations

from typing import Any

import numpy as np

try:  # pragma: no cover - exercised only where CuPy and a GPU exist
    import cupy as _cupy  # type: ignore[import-not-found]
except Exception:  # noqa: BLE001 - any import failure means "no GPU backend"
    _cupy = None


class device:
    """Where a tensor lives.

    Mirrors: ``torch.device`` (``cpu`` now; ``cuda[:n]`` when CuPy is available).
    """

    __slots__ = ("type", "index")

    def __init__(self, type: Any = "cpu", index: int | None = None) -> None:  # noqa: A002
        if isinstance(type, device):
            self.type, self.index = type.type, type.index
            return
        if not isinstance(type, str):
            raise TypeError(f"device() received an invalid combination of arguments: {type!r}")
        if ":" in type:
            type, idx = type.split(":", 1)
            index = int(idx)
        if type not in ("cpu", "cuda"):
            raise RuntimeError(
                "Expected one of cpu, cuda device type at start of device string: " + type
            )
        self.type, self.index = type, index

    def __eq__(self, other: object) -> bool:
        if isinstance(other, str):
            other = device(other)
        return (
            isinstance(other, device) and self.type == other.type and self.index == other.index
        )

    def __hash__(self) -> int:
        return hash((self.type, self.index))

    def __repr__(self) -> str:
        if self.index is None:
            return f"device(type='{self.type}')"
        return f"device(type='{self.type}', index={self.index})"

    def __str__(self) -> str:
        return self.type if self.index is None else f"{self.type}:{self.index}"


CPU = device("cpu")


def cuda_available() -> bool:
    if _cupy is None:
        return False
    try:  # pragma: no cover
        return _cupy.cuda.runtime.getDeviceCount() > 0
    except Exception:  # noqa: BLE001
        return False


def namespace_for(dev: device) -> Any:
    """The array module for a device."""
    if dev.type == "cpu":
        return np
    if _cupy is None or not cuda_available():
        raise RuntimeError("Found no NVIDIA driver on your system (CuPy backend unavailable).")
    return _cupy  # pragma: no cover


def namespace_of(arr: Any) -> Any:
    """The array module that owns `arr` (NumPy unless it is a CuPy array)."""
    if type(arr) is np.ndarray or _cupy is None:
        return np
    return _cupy if isinstance(arr, _cupy.ndarray) else np  # pragma: no cover


def device_of(arr: Any) -> device:
    if type(arr) is np.ndarray or _cupy is None or not isinstance(arr, _cupy.ndarray):
        return CPU
    return device("cuda", arr.device.id)  # pragma: no cover


def to_numpy(arr: Any) -> np.ndarray:
    """Host copy (or the array itself when it already is on the host)."""
    if type(arr) is np.ndarray:
        return arr
    if _cupy is not None and isinstance(arr, _cupy.ndarray):  # pragma: no cover
        return _cupy.asnumpy(arr)
    return np.asarray(arr)


def memory_owner(arr: Any) -> Any:
    """The array that owns `arr`'s memory (itself when it is not a view)."""
    owner = arr
    while isinstance(owner.base, type(arr)):
        owner = owner.base
    return owner


def element_offset(arr: Any, owner: Any) -> int:
    """Offset of `arr`'s first element from `owner`'s first element, in elements."""
    if type(arr) is np.ndarray:
        delta = arr.__array_interface__["data"][0] - owner.__array_interface__["data"][0]
    else:  # pragma: no cover - CuPy
        delta = arr.data.ptr - owner.data.ptr
    return delta // arr.itemsize


def as_strided(arr: Any, size: tuple, stride: tuple, storage_offset: int) -> Any:
    """View of the memory under `arr` with element strides, offset from `arr`'s first element.

    Mirrors ``Tensor.as_strided`` where the storage starts at `arr`'s first element.
    """
    xp = namespace_of(arr)
    owner = memory_owner(arr)
    flat = owner.reshape(-1, order="A")
    start = element_offset(arr, owner) + storage_offset
    item = arr.itemsize
    return xp.lib.stride_tricks.as_strided(
        flat[start:], shape=tuple(size), strides=tuple(s * item for s in stride)
    )
