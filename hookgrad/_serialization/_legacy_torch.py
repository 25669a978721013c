"""Reading PyTorch's legacy (pre-1.6, non-zip) checkpoint format.

``torch.save(..., _use_new_zipfile_serialization=False)`` writes five pickles one after the
other - a magic number, a protocol version, system info, the object (storages as persistent ids
``('storage', type, key, location, numel, view)``), the list of storage keys - followed by each
storage as an 8-byte little-endian element count and its raw bytes. Storages are allocated
only after checking that the rest of the file can hold them, and each count must match what
the pickle promised. The older tar-based format is refused (as by PyTorch's weights-only load).
"""

from __future__ import annotations

import os
import struct
import tarfile
from typing import Any

import numpy as np

from hookgrad._serialization import _dtypes_map
from hookgrad._serialization._errors import Malformed
from hookgrad._serialization._rebuild import new_storage
from hookgrad._serialization._torch_reader import place

__all__ = ["load_legacy", "MAGIC_NUMBER", "PROTOCOL_VERSION"]

MAGIC_NUMBER = 0x1950A86A20F9469CFC6C
PROTOCOL_VERSION = 1001


class _Storages:
    """Storages announced by the pickle, filled from the file after it."""

    def __init__(self, budget: int, map_location: Any) -> None:
        self.budget, self.map_location = budget, map_location
        self.entries: dict[str, tuple[np.ndarray, str, str]] = {}

    def persistent_load(self, pid: Any) -> Any:
        if type(pid) is not tuple or len(pid) != 6:
            raise Malformed(f"malformed storage id {pid!r}")
        _, storage_type, key, location, numel, view = pid
        if type(key) is not str or type(numel) is not int or numel < 0:
            raise Malformed(f"malformed storage id {pid!r}")
        if view is not None:
            raise Malformed("storage views of the legacy format are not supported")
        if key not in self.entries:
            try:
                dtype_name = _dtypes_map.storage_dtype(storage_type)
            except TypeError as e:
                raise Malformed(str(e)) from None
            nbytes = numel * _dtypes_map.itemsize(dtype_name)
            if nbytes > self.budget:
                raise Malformed(f"a storage of {nbytes} bytes is more than the file holds")
            self.budget -= nbytes
            probe = _dtypes_map.decode_storage(np.zeros(0, np.uint8), dtype_name, "little")
            flat = np.zeros(numel, probe.dtype)
            self.entries[key] = (flat, dtype_name, str(location))
        return new_storage(self.entries[key][0])

    def fill(self, fh: Any, keys: Any) -> None:
        if type(keys) is not list or set(keys) != set(self.entries) or len(keys) != len(set(keys)):
            raise Malformed("the storage key list does not match the pickle")
        for key in keys:
            flat, dtype_name, _ = self.entries[key]
            (numel,) = struct.unpack("<q", _exact(fh, 8))
            if numel != flat.size:
                raise Malformed(f"storage {key} holds {numel} elements, the pickle said "
                                f"{flat.size}")
            nbytes = numel * _dtypes_map.itemsize(dtype_name)
            raw = np.frombuffer(bytearray(_exact(fh, nbytes)), np.uint8)
            flat[...] = _dtypes_map.decode_storage(raw, dtype_name, "little")

    def place_all(self) -> None:
        for flat, _, location in self.entries.values():
            moved = place(flat, location, self.map_location)
            if moved is not flat:
                flat[...] = np.asarray(moved).reshape(flat.shape)


def _exact(fh: Any, n: int) -> bytes:
    data = fh.read(n)
    if len(data) != n:
        raise Malformed("the file is truncated")
    return data


def load_legacy(fh: Any, map_location: Any, unpickle: Any) -> Any:
    """The object of a legacy-format checkpoint read from the seekable binary file `fh`."""
    start = fh.tell()
    head = fh.read(512)
    fh.seek(start)
    if len(head) == 512 and head[257:262] == b"ustar" and tarfile.is_tarfile(fh):
        raise RuntimeError("Cannot use ``weights_only=True`` with files saved in the legacy "
                           ".tar format, and hookgrad does not read that format")
    fh.seek(start)
    size = fh.seek(0, os.SEEK_END) - start
    fh.seek(start)
    if size == 0:
        raise Malformed("the file is empty (Ran out of input)", EOFError)
    # a file that is not even a pickle fails in the unpickler, with its type (as in PyTorch)
    magic = unpickle(fh, _no_storage)
    if magic != MAGIC_NUMBER:
        raise Malformed("Invalid magic number; corrupt file?")
    version = unpickle(fh, _no_storage)
    if version != PROTOCOL_VERSION:
        raise Malformed(f"Invalid protocol version: {version!r}")
    unpickle(fh, _no_storage)  # system info
    storages = _Storages(size, map_location)
    result = unpickle(fh, storages.persistent_load)
    storages.fill(fh, unpickle(fh, _no_storage))
    storages.place_all()
    return result


def _no_storage(pid: Any) -> Any:
    raise Malformed("a storage id outside the object pickle")


