"""`PyTorchFileReader`: the records of a ``torch.save`` zip archive, by name.

Mirrors: ``torch.PyTorchFileReader`` (``torch._C.PyTorchFileReader``). Checkpoint tools
(Lightning's lazy loader) open an archive with it and read ``data.pkl`` and the storages under
``data/`` themselves. Record names are relative to the archive's top folder, as PyTorch's are;
a missing record raises ``RuntimeError``.
"""

from __future__ import annotations

import zipfile
from typing import Any

import numpy as np

__all__ = ["PyTorchFileReader"]


class PyTorchFileReader:
    """Read the records of a zip checkpoint written by ``save`` (hookgrad's or PyTorch's).

    Example:
        >>> import io, hookgrad as torch
        >>> buf = io.BytesIO(); torch.save(torch.arange(3.0), buf)
        >>> r = torch.PyTorchFileReader(io.BytesIO(buf.getvalue()))
        >>> r.get_storage_from_record("data/0", 3, torch.float32)
        tensor([0., 1., 2.])

    Mirrors: ``torch.PyTorchFileReader``.
    """

    def __init__(self, file: Any) -> None:
        try:
            self._zip = zipfile.ZipFile(file)
        except zipfile.BadZipFile as e:
            raise RuntimeError(f"PytorchStreamReader failed reading zip archive: {e}") from None
        names = self._zip.namelist()
        if not names:
            raise RuntimeError("PytorchStreamReader failed reading zip archive: empty archive")
        self._prefix = names[0].split("/", 1)[0] + "/"
        self._records = [n[len(self._prefix):] for n in names if n.startswith(self._prefix)]

    def get_all_records(self) -> list[str]:
        """The record names, in archive order."""
        return list(self._records)

    def has_record(self, name: str) -> bool:
        """Whether record `name` exists."""
        return name in self._records

    def _info(self, name: str) -> zipfile.ZipInfo:
        if name not in self._records:
            raise RuntimeError(f"[enforce fail at inline_container.cc] . file not found: "
                               f"{self._prefix}{name}")
        return self._zip.getinfo(self._prefix + name)

    def get_record(self, name: str) -> bytes:
        """The bytes of record `name`."""
        return self._zip.read(self._info(name))

    def get_record_size(self, name: str) -> int:
        """The size in bytes of record `name`."""
        return self._info(name).file_size

    def get_storage_from_record(self, name: str, numel: int, dtype: Any) -> Any:
        """Record `name` as a 1-D tensor of `numel` elements of `dtype`."""
        from hookgrad._functional.creation import tensor

        raw = self.get_record(name)
        np_dtype = np.dtype(dtype.name if hasattr(dtype, "name") else dtype)
        if len(raw) != numel * np_dtype.itemsize:
            raise RuntimeError(
                f"record size ({len(raw)} bytes) does not match expected size "
                f"({numel * np_dtype.itemsize} bytes = {numel} elements * {np_dtype.itemsize} "
                f"bytes/element) for dtype {dtype}")
        return tensor(np.frombuffer(raw, dtype=np_dtype.newbyteorder("<")).astype(np_dtype))

    def serialization_id(self) -> str:
        """The archive's ``.data/serialization_id`` record ("" when absent)."""
        rec = ".data/serialization_id"
        return self.get_record(rec).decode() if rec in self._records else ""
