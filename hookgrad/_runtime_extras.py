"""Small top-level runtime names: defaults, anomaly switch, file-backed tensors, device modules.

Mirrors: ``torch.set_default_tensor_type``, ``torch.set_anomaly_enabled``,
``torch.is_distributed``, ``torch.from_file``, ``torch.get_device_module``,
``torch.AcceleratorError``, ``torch.FatalError``, ``torch.classproperty``,
``torch.get_file_path``, ``torch.cudnn_is_acceptable``, ``torch.AggregationType``
(``SUM``/``AVG``), ``torch.PRIVATE_OPS`` and the loader constants of a CPU build.
"""

from __future__ import annotations

import enum
import importlib
import os
import sys
import warnings
from typing import Any

import numpy as np

from hookgrad._dtypes import get_default_dtype, set_default_dtype, to_dtype
from hookgrad import _jit_runtime
from hookgrad._tensor import Tensor
from hookgrad.autograd.anomaly_mode import _set as _set_anomaly

__all__ = ["set_default_tensor_type", "set_anomaly_enabled", "is_distributed", "from_file",
           "get_device_module", "AcceleratorError", "FatalError", "JITException", "classproperty",
           "get_file_path", "USE_GLOBAL_DEPS", "USE_RTLD_GLOBAL_WITH_LIBTORCH",
           "cudnn_is_acceptable", "AggregationType", "SUM", "AVG", "PRIVATE_OPS",
           "prepare_multiprocessing_environment", "thread_safe_generator",
           "profiler_allow_cudagraph_cupti_lazy_reinit_cuda12"]

USE_GLOBAL_DEPS = True  # PyTorch's loader flags, as a default build sets them
USE_RTLD_GLOBAL_WITH_LIBTORCH = False


class AcceleratorError(RuntimeError):
    """An accelerator runtime failure. Mirrors: ``torch.AcceleratorError``."""


# ``torch.JITException`` is ``torch.jit.Error``: one class under two names
JITException = _jit_runtime.Error


class FatalError(Exception):
    """Mirrors: ``torch.FatalError`` (a C++ fatal error surfaced to Python)."""


def set_default_tensor_type(t: Any) -> None:
    """Set the default floating dtype from a legacy tensor type (``torch.DoubleTensor`` or
    ``"torch.DoubleTensor"``); CUDA types raise TypeError as on a CPU build.

    Mirrors: ``torch.set_default_tensor_type`` (deprecated: warns as PyTorch does).
    """
    warnings.warn("torch.set_default_tensor_type() is deprecated as of PyTorch 2.1, please use "
                  "torch.set_default_dtype() and torch.set_default_device() as alternatives.",
                  UserWarning, stacklevel=2)
    if isinstance(t, str):
        if ".cuda." in t:
            raise TypeError(f"type {t} not available. Torch not compiled with CUDA enabled.")
        module, _, name = t.rpartition(".")
        module = "hookgrad" + module[len("torch"):] if module.startswith("torch") else module
        t = getattr(importlib.import_module(module), name)
    dtype = getattr(t, "dtype", None) if isinstance(t, type) else None
    if dtype is None:
        raise TypeError("invalid type object: only floating-point types are supported as the "
                        "default type")
    if not dtype.is_floating_point:
        raise TypeError("only floating-point types are supported as the default type")
    set_default_dtype(dtype)


def set_anomaly_enabled(enabled: bool, check_nan: bool = True) -> None:
    """Turn anomaly detection on or off process-wide. Mirrors: ``torch.set_anomaly_enabled``."""
    _set_anomaly(enabled, check_nan)


def is_distributed(input: Tensor) -> bool:  # noqa: A002 - torch's name
    """Always False: a hookgrad tensor is never a distributed tensor.

    Mirrors: ``torch.is_distributed``.
    """
    if not isinstance(input, Tensor):
        raise TypeError(f"is_distributed(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    return False


def from_file(filename: str, shared: bool | None = None, size: int = 0, *, dtype: Any = None,
              layout: Any = None, device: Any = None, pin_memory: bool = False,
              requires_grad: bool = False) -> Tensor:
    """A 1-D tensor of the first `size` elements of a raw binary file (native byte order).

    With ``shared=True`` the tensor maps the file, so writes to the tensor reach the file.

    Mirrors: ``torch.from_file``.
    """
    from hookgrad._functional.creation import from_numpy
    dt = get_default_dtype() if dtype is None else to_dtype(dtype)
    if not os.path.isfile(filename):
        mode = "read-write" if shared else "read-only"
        raise RuntimeError(f"unable to open file <{filename}> in {mode} mode: No such file or "
                           "directory (2)")
    need, have = size * dt.itemsize, os.path.getsize(filename)
    if need > have:
        raise RuntimeError(f"file <{filename}> size <{have}> is smaller than the required "
                           f"mapping size <{need}>")
    if shared and size:
        arr = np.memmap(filename, dtype=dt.np, mode="r+", shape=(size,))
    else:
        arr = np.fromfile(filename, dtype=dt.np, count=size)
    out = from_numpy(arr)
    if requires_grad:
        out.requires_grad_(True)
    return out


def get_device_module(device: Any = None) -> Any:
    """The ``torch.<type>`` module of a device (``'cpu'`` -> ``torch.cpu``); with no argument,
    the current accelerator's (the CPU, for hookgrad). Mirrors: ``torch.get_device_module``.
    """
    name = "cpu" if device is None else getattr(device, "type", None) or str(device).split(":")[0]
    from hookgrad._backend import device as _device
    _device(name)  # PyTorch's error for an unknown device type
    module = sys.modules.get(f"hookgrad.{name}")
    if module is None:
        raise RuntimeError(f"Device '{name}' does not have a corresponding module registered as "
                           f"'torch.{name}'.")
    return module


def classproperty(func: Any) -> Any:
    """A read-only property of the class itself. Mirrors: ``torch.classproperty``."""
    if not isinstance(func, (classmethod, staticmethod)):
        func = classmethod(func)
    return _ClassPropertyDescriptor(func)


class _ClassPropertyDescriptor:
    def __init__(self, fget: Any) -> None:
        self.fget = fget

    def __get__(self, instance: Any, owner: Any = None) -> Any:
        if owner is None:
            owner = type(instance)
        return self.fget.__get__(instance, owner)()


def get_file_path(*path_components: str) -> str:
    """A path under the directory holding the package. Mirrors: ``torch.get_file_path``."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    return os.path.join(root, *path_components)


def cudnn_is_acceptable(tensor: Tensor) -> bool:
    """False: cuDNN never runs on a CPU build. Mirrors: ``torch.cudnn_is_acceptable``."""
    return False


class AggregationType(enum.IntEnum):
    """How a TorchScript benchmark aggregates. Mirrors: ``torch.AggregationType``."""

    SUM = 0
    AVG = 1


SUM, AVG = AggregationType.SUM, AggregationType.AVG
PRIVATE_OPS = ("unique_dim",)  # PyTorch's tuple of ATen ops kept out of the public namespace


def prepare_multiprocessing_environment(path: str) -> None:
    """A hook of PyTorch's internal builds; does nothing, as in the open-source build.

    Mirrors: ``torch.prepare_multiprocessing_environment``.
    """


def thread_safe_generator() -> None:
    """The generator of the current thread-based loader worker: None, since hookgrad's
    ``DataLoader`` loads in the calling thread. Mirrors: ``torch.thread_safe_generator``."""
    return None


def profiler_allow_cudagraph_cupti_lazy_reinit_cuda12() -> bool:
    """True, as PyTorch's open-source build answers (a CUDA profiler setting).

    Mirrors: ``torch.profiler_allow_cudagraph_cupti_lazy_reinit_cuda12``.
    """
    return True
