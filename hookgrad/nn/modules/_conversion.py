"""Argument parsing for ``Module.to`` (PyTorch's ``torch._C._nn._parse_to``, CPU only)."""

from __future__ import annotations

from typing import Any

from hookgrad._backend import device as _device
from hookgrad._dtypes import dtype as _dtype
from hookgrad._dtypes import to_dtype
from hookgrad._tensor import Tensor

__all__ = ["parse_to"]


def _check_device(dev: Any) -> None:
    d = dev if isinstance(dev, _device) else _device(dev)
    if d.type != "cpu":
        raise RuntimeError(f"hookgrad: device {d} is not available (CPU backend only)")


def parse_to(args: tuple, kwargs: dict) -> _dtype | None:
    """The dtype ``Module.to(...)`` asks for (``None``: keep); validates devices.

    Raises:
        TypeError: for a dtype that is not floating point.
    """
    dtype = kwargs.get("dtype")
    if kwargs.get("device") is not None:
        _check_device(kwargs["device"])
    for a in args:
        if isinstance(a, Tensor):
            dtype = a.dtype
        elif isinstance(a, (str, _device)):
            _check_device(a)
        elif isinstance(a, bool):  # non_blocking
            continue
        elif a is not None:
            dtype = a
    if dtype is None:
        return None
    d = to_dtype(dtype)
    if not d.is_floating_point:
        raise TypeError(
            "nn.Module.to only accepts floating point or complex dtypes, but got desired "
            f"dtype={d}"
        )
    return d
