"""Type aliases PyTorch's annotations use. Mirrors: ``torch.types``.

Libraries import ``Number``, ``Device``, ``_size`` ... from here at load time (pytorch-ignite).
The aliases name hookgrad's classes.

Example:
    >>> from hookgrad.types import Number
    >>> isinstance(3.0, Number)
    True
"""

from __future__ import annotations

import os
from typing import IO, Any, Union

from hookgrad._backend import device as _device_cls
from hookgrad._dtypes import Size
from hookgrad._dtypes import dtype as _dtype_cls
from hookgrad._storage import UntypedStorage
from hookgrad._tensor import Tensor

__all__ = ["Number", "Device", "Storage", "FileLike", "Size", "Tensor", "_TensorOrTensors",
           "_size", "_int", "_float", "_bool", "_complex", "_str", "_bytes", "_dtype",
           "_device", "_Number", "IntLikeType", "FloatLikeType", "BoolLikeType"]

_int, _float, _bool, _complex, _str, _bytes = int, float, bool, complex, str, bytes
_dtype = _dtype_cls
_device = _device_cls
_size = Union[Size, list[int], tuple[int, ...]]
_TensorOrTensors = Union[Tensor, tuple[Tensor, ...]]
Number = Union[int, float, bool]
_Number = (int, float, bool)
IntLikeType = int
FloatLikeType = float
BoolLikeType = bool
Device = Union[_device_cls, str, int, None]
Storage = UntypedStorage
FileLike = Union[str, os.PathLike, IO[bytes]]
_Any = Any
