"""Reading PyTorch's zip checkpoint format (``torch.save`` since PyTorch 1.6).

The archive holds ``<name>/data.pkl`` (the pickled object), ``<name>/data/<key>`` (the raw
bytes of each storage), ``<name>/byteorder``, ``<name>/version`` and a few small records.
Checks before anything is allocated: member names are unique; no member is encrypted; members
are stored or deflated (deflated ones may not promise more than `MAX_INFLATION` times the file's
size in all: a zip bomb is refused unread); a stored member lies inside the file. A storage is
read only when the pickle asks for it, and its record must hold exactly ``numel * itemsize``
bytes; every read is checked against the member's CRC-32.
"""

from __future__ import annotations

import io
import os
import struct
import zipfile
from collections.abc import Callable
from typing import Any

import numpy as np

from hookgrad import _backend
from hookgrad._serialization import _dtypes_map
from hookgrad._serialization._errors import Malformed
from hookgrad._serialization._rebuild import new_storage
from hookgrad._storage import _StorageBase
from hookgrad._tensor import Tensor
from hookgrad.utils._bounded_read import check_members, guarded, read_member

__all__ = ["TorchArchive", "MAX_INFLATION", "UserCodeError"]

MAX_INFLATION = 64  # deflated members may inflate to at most this times the file size (+1 MiB)
_CUDA_MSG = (
    "Attempting to deserialize object on a CUDA device but torch.cuda.is_available() is False. "
    "If you are running on a CPU-only machine, please use torch.load with "
    "map_location=torch.device('cpu') to map your storages to the CPU.")


class UserCodeError(Exception):
    """Carries an exception for the caller past the file-error mapping: one raised by the
    caller's `map_location`, or PyTorch's ``RuntimeError`` for a location this machine lacks."""


def open_zip(fh: Any) -> tuple[zipfile.ZipFile, int]:
    """The checked `ZipFile` of a seekable binary file, and the file's size."""
    with guarded("not a zip archive"):
        start = fh.tell()
        size = fh.seek(0, os.SEEK_END)
        fh.seek(start)
        zf = zipfile.ZipFile(fh, "r")
    check_members(zf, size - start, max_inflation=MAX_INFLATION)
    return zf, size


def is_zip(fh: Any) -> bool:
    """Whether the seekable file starts with a zip local header (PyTorch's test)."""
    start = fh.tell()
    magic = fh.read(4)
    if not isinstance(magic, bytes):  # a text file object: PyTorch's zip test asserts
        raise AssertionError(f"Expected bytes, got {type(magic).__name__}")
    fh.seek(start)
    return magic == b"PK\x03\x04"


class TorchArchive:
    """One open PyTorch zip archive: its records and its storages, loaded on demand."""

    def __init__(self, zf: zipfile.ZipFile, size: int, map_location: Any = None,
                 mmap_path: str | None = None) -> None:
        self.zf, self.size, self.map_location = zf, size, map_location
        names = zf.namelist()
        if not names:
            raise Malformed("the zip archive is empty")
        self.prefix = names[0].split("/", 1)[0] if "/" in names[0] else ""
        self.storages: dict[str, Any] = {}
        self._mmap = self._map(mmap_path) if mmap_path is not None else None
        order = self.record("byteorder", 16) if self.has("byteorder") else b"little"
        if order not in (b"little", b"big"):
            raise Malformed(f"Unknown endianness type: {order.decode('latin1')}")
        self.byteorder = order.decode()

    def name(self, record: str) -> str:
        return f"{self.prefix}/{record}" if self.prefix else record

    def has(self, record: str) -> bool:
        return self.name(record) in self.zf.NameToInfo

    def is_torchscript(self) -> bool:
        return self.has("constants.pkl")

    def record(self, record: str, limit: int) -> bytes:
        """A whole record (CRC-checked); refused when missing or over `limit` bytes."""
        name = self.name(record)
        if name not in self.zf.NameToInfo:
            raise Malformed(f"the archive has no {record!r} record")
        return read_member(self.zf, name, limit)

    def pickle_file(self) -> io.BytesIO:
        """``data.pkl``, after checking the ``version`` record PyTorch requires."""
        if not self.has("data.pkl"):
            raise Malformed("no data.pkl record (not a torch.save archive)")
        if not self.has("version") and not self.has(".data/version"):
            raise Malformed('Expected hasRecord("version") to be true, but got false')
        return io.BytesIO(self.record("data.pkl", MAX_INFLATION * self.size + (1 << 20)))

    def persistent_load(self, pid: Any) -> Any:
        """The storage a ``('storage', type, key, location, numel)`` persistent id names."""
        if type(pid) is not tuple or len(pid) != 5:
            raise Malformed(f"malformed storage id {pid!r}")
        _, storage_type, key, location, numel = pid
        location = location.decode("ascii") if isinstance(location, bytes) else location
        if type(key) is not str or type(location) is not str or type(numel) is not int \
                or numel < 0:
            raise Malformed(f"malformed storage id {pid!r}")
        if key not in self.storages:
            try:
                dtype_name = _dtypes_map.storage_dtype(storage_type)
            except TypeError as e:
                raise Malformed(str(e)) from None
            flat = self._placed(self._read_storage(key, numel, dtype_name), location)
            # a TypedStorage also for an UntypedStorage saved alone (uint8): PyTorch does so
            self.storages[key] = new_storage(flat)
        return self.storages[key]

    def _read_storage(self, key: str, numel: int, dtype_name: str) -> np.ndarray:
        if not _dtypes_map.readable(dtype_name):
            raise Malformed(f"hookgrad has no {dtype_name} dtype, so it cannot load that storage")
        nbytes = numel * _dtypes_map.itemsize(dtype_name)
        name = self.name(f"data/{key}")
        info = self.zf.NameToInfo.get(name)
        if info is None:
            raise Malformed(f"storage record data/{key} is missing")
        if info.file_size != nbytes:
            raise Malformed(f"record size ({info.file_size} bytes) does not match expected "
                            f"size ({nbytes} bytes = {numel} elements) for storage data/{key}")
        if self._mmap is not None and info.compress_type == zipfile.ZIP_STORED:
            start = self._data_offset(info)
            raw = self._mmap[start:start + nbytes]
        else:
            raw = np.frombuffer(bytearray(read_member(self.zf, name, nbytes)), np.uint8)
        try:
            return _dtypes_map.decode_storage(raw, dtype_name, self.byteorder)
        except TypeError as e:
            raise Malformed(str(e)) from None

    def _map(self, path: str) -> np.ndarray:
        return np.memmap(path, dtype=np.uint8, mode="c")  # copy-on-write, as MAP_PRIVATE

    def _data_offset(self, info: zipfile.ZipInfo) -> int:
        header = bytes(self._mmap[info.header_offset:info.header_offset + 30])
        if len(header) != 30 or header[:4] != b"PK\x03\x04":
            raise Malformed(f"bad local header of {info.filename!r}")
        name_len, extra_len = struct.unpack("<HH", header[26:30])
        start = info.header_offset + 30 + name_len + extra_len
        if start + info.file_size > self._mmap.size:
            raise Malformed(f"member {info.filename!r} runs past the end of the file")
        return start

    def _placed(self, flat: np.ndarray, location: str) -> Any:
        return place(flat, location, self.map_location)


def _default_restore(flat: Any, location: str, from_file: bool = True) -> Any:
    if location.startswith("cpu"):
        return flat
    if location.startswith("cuda"):
        try:
            xp = _backend.namespace_for(_backend.device(location))
        except Exception:
            raise UserCodeError(RuntimeError(_CUDA_MSG)) from None
        return xp.asarray(flat)  # pragma: no cover - needs a GPU backend
    msg = f"don't know how to restore data location of storage at {location!r}"
    raise Malformed(msg) if from_file else UserCodeError(RuntimeError(msg))


def place(flat: Any, location: str, map_location: Any) -> Any:
    """Where a loaded storage goes, following `map_location` as ``torch.load`` does."""
    if map_location is None:
        return _default_restore(flat, location)
    if isinstance(map_location, dict):
        target = map_location.get(location, location)
        return _default_restore(flat, str(target), from_file=location not in map_location)
    if isinstance(map_location, (str, bytes, _backend.device)):
        target = map_location.decode() if isinstance(map_location, bytes) else str(map_location)
        return _default_restore(flat, target, from_file=False)
    if not callable(map_location):
        raise TypeError(f"map_location of type {type(map_location).__name__} is not supported")
    try:
        result = map_location(new_storage(flat), location)
    except Exception as e:  # the caller's own error reaches the caller unchanged
        raise UserCodeError(e) from e
    if result is None:
        return _default_restore(flat, location)
    return _array_of(result)


def _array_of(result: Any) -> Any:
    if isinstance(result, _StorageBase):
        return result._array.reshape(-1)
    if isinstance(result, Tensor):
        return result.detach()._data.reshape(-1)
    raise TypeError(f"map_location returned {type(result).__name__}, not a storage")


def unpickle_archive(archive: TorchArchive, unpickle: Callable[[Any, Callable], Any]) -> Any:
    """Run `unpickle(data_file, persistent_load)` on the archive's ``data.pkl``."""
    return unpickle(archive.pickle_file(), archive.persistent_load)


