"""PyTorch's storage type names and dtype names, and what they are in hookgrad.

A ``torch.save`` pickle names each storage's element type either by a legacy storage class
(``torch.FloatStorage``) or, for dtypes added later, by the dtype itself (``torch.uint16``).
hookgrad has the dtypes of `hookgrad._dtypes.ALL_DTYPES` (``bfloat16`` included: its storages
load and save as the same 2-byte bit patterns); any dtype hookgrad lacks (complex32, float8,
quantized) is refused with its name.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from hookgrad import _dtypes

__all__ = ["StorageType", "ForeignDtype", "STORAGE_NAMES", "DTYPE_GLOBALS", "storage_name",
           "storage_dtype", "decode_storage", "readable", "itemsize"]


class StorageType:
    """What a ``torch.<Name>Storage`` global unpickles to: it names an element type."""

    __slots__ = ("name", "dtype_name")

    def __init__(self, name: str, dtype_name: str) -> None:
        self.name, self.dtype_name = name, dtype_name

    def __repr__(self) -> str:
        return f"StorageType(dtype=torch.{self.dtype_name})"


class ForeignDtype:
    """A PyTorch dtype hookgrad has no tensors of (``torch.complex32``, ``torch.qint8``...)."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"torch.{self.name}"


# legacy storage class name -> torch dtype name (torch.storage._dtype_to_storage_type_map)
_LEGACY_STORAGES = {
    "FloatStorage": "float32", "DoubleStorage": "float64", "HalfStorage": "float16",
    "BFloat16Storage": "bfloat16", "LongStorage": "int64", "IntStorage": "int32",
    "ShortStorage": "int16", "CharStorage": "int8", "ByteStorage": "uint8",
    "BoolStorage": "bool", "ComplexFloatStorage": "complex64",
    "ComplexDoubleStorage": "complex128", "QInt8Storage": "qint8", "QUInt8Storage": "quint8",
    "QInt32Storage": "qint32", "QUInt4x2Storage": "quint4x2", "QUInt2x4Storage": "quint2x4",
}
STORAGE_NAMES = {name: StorageType(name, dt) for name, dt in _LEGACY_STORAGES.items()}
_NAME_OF_DTYPE = {dt: name for name, dt in _LEGACY_STORAGES.items()}

_FOREIGN = ("complex32", "complex64", "complex128", "uint16", "uint32", "uint64",
            "float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz",
            "float8_e8m0fnu", "float4_e2m1fn_x2", "qint8", "quint8", "qint32", "quint4x2",
            "quint2x4", "bits1x8", "bits2x4", "bits4x2", "bits8", "bits16", "cfloat", "cdouble",
            *(f"uint{n}" for n in range(1, 8)), *(f"int{n}" for n in range(1, 8)))
_OWN = {d.name: d for d in _dtypes.ALL_DTYPES}
# ``torch.<dtype>`` globals: hookgrad's dtype objects, or a marker for the ones it lacks
DTYPE_GLOBALS: dict[str, Any] = {name: ForeignDtype(name) for name in _FOREIGN}
DTYPE_GLOBALS.update(_OWN)
DTYPE_GLOBALS.update({"half": _dtypes.float16, "float": _dtypes.float32,
                      "double": _dtypes.float64, "long": _dtypes.int64, "int": _dtypes.int32,
                      "short": _dtypes.int16, "cfloat": _dtypes.complex64,
                      "cdouble": _dtypes.complex128})


def storage_name(d: _dtypes.dtype) -> str:
    """The legacy storage class name PyTorch pickles for a hookgrad dtype."""
    return _NAME_OF_DTYPE.get(d.name, d.name)  # (uint16/32/64: PyTorch pickles the dtype)


def storage_dtype(storage_type: Any) -> str:
    """The torch dtype name a storage-type global stands for; `Malformed`-worthy otherwise."""
    if isinstance(storage_type, StorageType):
        return storage_type.dtype_name
    if isinstance(storage_type, (_dtypes.dtype, ForeignDtype)):
        return storage_type.name
    raise TypeError(f"not a storage type: {storage_type!r}")


def decode_storage(raw: np.ndarray, dtype_name: str, byteorder: str) -> np.ndarray:
    """The flat elements of a storage from its raw bytes (``uint8``), in native byte order.

    Dtypes hookgrad lacks raise `TypeError`.
    """
    if dtype_name == "bfloat16":  # (ml_dtypes' dtype has no byte-order variants)
        half = raw.view("<u2" if byteorder == "little" else ">u2").astype(np.uint16)
        return half.view(_dtypes.BF16_NP)
    own = _OWN.get(dtype_name)
    if own is None:
        raise TypeError(f"hookgrad has no {dtype_name} dtype, so it cannot load that storage")
    np_dtype = own.np.newbyteorder("<" if byteorder == "little" else ">")
    out = raw.view(np_dtype)
    return out if np_dtype.isnative else out.astype(own.np)


def readable(dtype_name: str) -> bool:
    """Whether hookgrad can load storages of this torch dtype (one of its own)."""
    return dtype_name in _OWN


def itemsize(dtype_name: str) -> int:
    """Bytes per element of a torch dtype name as stored in a checkpoint."""
    own = _OWN.get(dtype_name)
    if own is not None:
        return own.itemsize
    sizes = {"complex32": 4, "complex64": 8, "complex128": 16, "uint16": 2,
             "uint32": 4, "uint64": 8, "qint32": 4}
    return sizes.get(dtype_name, 1)
