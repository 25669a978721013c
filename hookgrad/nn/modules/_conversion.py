"""Argument parsing for ``Module.to`` (PyTorch's ``torch._C._nn._parse_to``)."""

from __future__ import annotations

from typing import Any

from hookgrad._backend import backend_for
from hookgrad._backend import device as _device
from hookgrad._dtypes import dtype as _dtype
from hookgrad._dtypes import to_dtype
from hookgrad._tensor import Tensor

__all__ = ["parse_to"]


def _device_arg(dev: Any) -> _device:
    d = dev if isinstance(dev, _device) else _device(dev)
    backend_for(d)  # PyTorch's error for a device that is not available
    return d


def parse_to(args: tuple, kwargs: dict) -> tuple[_device | None, _dtype | None]:
    """The ``(device, dtype)`` ``Module.to(...)`` asks for (``None``: keep).

    Raises:
        TypeError: for a dtype that is not floating point.
        RuntimeError: for a device that is not available.
    """
    dtype = kwargs.get("dtype")
    dev = _device_arg(kwargs["device"]) if kwargs.get("device") is not None else None
    for a in args:
        if isinstance(a, Tensor):
            dtype, dev = a.dtype, a.device
        elif isinstance(a, (str, _device)):
            dev = _device_arg(a)
        elif isinstance(a, bool):  # non_blocking
            continue
        elif a is not None:
            dtype = a
    if dtype is None:
        return dev, None
    d = to_dtype(dtype)
    if not d.is_floating_point:
        raise TypeError(
            "nn.Module.to only accepts floating point or complex dtypes, but got desired "
            f"dtype={d}"
        )
    return dev, d
