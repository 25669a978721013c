"""DLPack exchange: hookgrad tensors to and from other array libraries without copying.

Mirrors ``torch.utils.dlpack`` (``to_dlpack``, ``from_dlpack``, ``DLDeviceType``) and
``torch.from_dlpack``. A CPU tensor exports its NumPy array's DLPack capsule; an import goes
through ``numpy.from_dlpack`` and shares memory with the producer, strides included.
"""

from __future__ import annotations

import enum
from typing import Any

import numpy as np


class DLDeviceType(enum.IntEnum):
    """Mirrors ``torch.utils.dlpack.DLDeviceType`` (DLPack's device codes)."""

    kDLCPU = 1
    kDLCUDA = 2
    kDLCUDAHost = 3
    kDLOpenCL = 4
    kDLVulkan = 7
    kDLMetal = 8
    kDLVPI = 9
    kDLROCM = 10
    kDLROCMHost = 11
    kDLExtDev = 12
    kDLCUDAManaged = 13
    kDLOneAPI = 14
    kDLWebGPU = 15
    kDLHexagon = 16
    kDLMAIA = 17


def _host_array(tensor: Any) -> np.ndarray:
    if tensor.requires_grad:
        raise BufferError("Can't export tensors that require gradient, use tensor.detach()")
    if tensor.device.type != "cpu":
        raise BufferError(f"hookgrad exports only CPU tensors through DLPack, got {tensor.device}")
    return tensor.numpy()


def tensor_dlpack(tensor: Any, *, stream: Any = -1, max_version: Any = None,
                  dl_device: Any = None, copy: bool | None = None) -> Any:
    """``Tensor.__dlpack__``: the DLPack capsule of the tensor's NumPy array."""
    array = _host_array(tensor)
    if copy:
        array = array.copy()
    if max_version is None:
        return array.__dlpack__()
    return array.__dlpack__(max_version=max_version)


def tensor_dlpack_device(tensor: Any) -> tuple[DLDeviceType, int]:
    """``Tensor.__dlpack_device__``: ``(kDLCPU, 0)`` for CPU tensors."""
    if tensor.device.type != "cpu":
        raise BufferError(f"hookgrad exports only CPU tensors through DLPack, got {tensor.device}")
    return (DLDeviceType.kDLCPU, 0)


def to_dlpack(tensor: Any) -> Any:
    """A one-shot DLPack capsule of `tensor`.

    Mirrors: ``torch.utils.dlpack.to_dlpack``.
    """
    return tensor_dlpack(tensor)


class _Capsule:
    """Presents a bare capsule as the ``__dlpack__`` protocol that ``numpy.from_dlpack`` reads."""

    def __init__(self, capsule: Any) -> None:
        self.capsule = capsule

    def __dlpack__(self, **_: Any) -> Any:
        return self.capsule

    def __dlpack_device__(self) -> tuple[int, int]:
        return (int(DLDeviceType.kDLCPU), 0)


class _Alias:
    """Owns a read-only import and presents the same memory as writable (see `_writable_alias`)."""

    def __init__(self, array: np.ndarray) -> None:
        self.array = array
        self.__array_interface__ = {
            "shape": array.shape, "typestr": array.dtype.str, "descr": array.dtype.descr,
            "strides": array.strides, "data": (array.__array_interface__["data"][0], False),
            "version": 3}


def _writable_alias(array: np.ndarray) -> np.ndarray:
    """A writable array over `array`'s memory, keeping `array` (and its producer) alive.

    NumPy marks imports of legacy DLPack capsules read-only; PyTorch's import shares the memory
    writably, and writes through the tensor must reach the producer as they do there.
    """
    return np.asarray(_Alias(array))


def from_dlpack(ext_tensor: Any, *, device: Any = None, copy: bool | None = None) -> Any:
    """A tensor sharing memory with `ext_tensor`.

    `ext_tensor` is an object with ``__dlpack__`` (a NumPy array, a hookgrad or PyTorch CPU
    tensor, ...) or a DLPack capsule from ``to_dlpack``, which can be consumed only once.

    Mirrors: ``torch.from_dlpack`` and ``torch.utils.dlpack.from_dlpack``.
    """
    from hookgrad._functional.creation import from_numpy

    if device is not None and str(device) not in ("cpu", "cpu:0"):
        raise RuntimeError(f"from_dlpack: hookgrad tensors live on the CPU, got device={device}")
    source = ext_tensor if hasattr(ext_tensor, "__dlpack__") else _Capsule(ext_tensor)
    try:
        array = np.from_dlpack(source)
    except (TypeError, ValueError, BufferError, RuntimeError) as exc:
        if source is ext_tensor:
            raise
        raise RuntimeError(
            "from_dlpack received an invalid capsule. Note that DLTensor capsules can be "
            "consumed only once, so you might have already constructed a tensor from it "
            "once.") from exc
    if copy:
        array = array.copy()
    if not array.flags.writeable:
        array = _writable_alias(array)
    return from_numpy(array)


__all__ = ["DLDeviceType", "from_dlpack", "to_dlpack"]
