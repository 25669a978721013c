"""Reading and writing the archive container (a ZIP of stored members under one top folder).

Members are stored uncompressed and each member's data starts on a 64-byte boundary (the local
header's ``extra`` field is padded), as PyTorch's writer does, so array payloads can be wrapped
without copying. Readers strip the single top-level folder and refuse member paths that could
escape it. Any container problem is a ``RuntimeError`` (the type PyTorch's reader raises).
"""

from __future__ import annotations

import os
import struct
import zipfile
from pathlib import Path, PurePosixPath
from typing import IO, Any

ALIGNMENT = 64
_PAD_TAG = 0x4648  # "HF": a private extra-field id; readers skip unknown ids
_HEADER = 30  # fixed part of a ZIP local file header


def _bad(reason: str) -> RuntimeError:
    return RuntimeError(f"hookgrad.package failed reading zip archive: {reason}. The file is not "
                        "a package archive or it is truncated or corrupted.")


class ZipWriter:
    """Writes stored, 64-byte aligned members under ``<top>/`` to a path or binary buffer."""

    def __init__(self, f: str | os.PathLike | IO[bytes]) -> None:
        if isinstance(f, (str, os.PathLike)):
            path = os.fspath(f)
            self.top = Path(path).stem or "archive"
            self._own: IO[bytes] | None = open(path, "wb")  # noqa: SIM115 - closed in close()
            stream: IO[bytes] = self._own
        else:
            self.top, self._own, stream = "archive", None, f
        try:
            self._start = stream.tell() if stream.seekable() else 0
        except (AttributeError, OSError):
            self._start = 0
        self._zip = zipfile.ZipFile(stream, "w", compression=zipfile.ZIP_STORED)
        self.closed = False

    def write(self, name: str, data: bytes) -> None:
        """Add one member `name` (relative to the top folder) holding `data`."""
        info = zipfile.ZipInfo(f"{self.top}/{name}", date_time=(1980, 1, 1, 0, 0, 0))
        info.compress_type = zipfile.ZIP_STORED
        info.external_attr = 0o644 << 16
        # for a non-seekable stream zipfile's wrapper counts the bytes written: tell() works
        offset = self._zip.fp.tell() - self._start  # type: ignore[union-attr]
        used = _HEADER + len(info.filename.encode("utf-8")) + 4
        pad = -(offset + used) % ALIGNMENT
        info.extra = struct.pack("<HH", _PAD_TAG, pad) + b"\0" * pad
        self._zip.writestr(info, data)

    def close(self) -> None:
        """Write the central directory; close the file if this writer opened it."""
        if self.closed:
            return
        self.closed = True
        self._zip.close()
        if self._own is not None:
            self._own.close()


class ZipReader:
    """Reads the members of a package ZIP (path or binary buffer), top folder stripped."""

    def __init__(self, f: str | os.PathLike | IO[bytes]) -> None:
        try:
            self._zip = zipfile.ZipFile(f if not isinstance(f, os.PathLike) else os.fspath(f))
        except FileNotFoundError as e:
            raise RuntimeError(f"open file failed: No such file or directory, file path: "
                               f"{os.fspath(f) if not hasattr(f, 'read') else f}") from e
        except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, ValueError, EOFError) as e:
            raise _bad(f"not a ZIP archive ({e})") from None
        self._members: dict[str, zipfile.ZipInfo] = {}
        tops = set()
        for info in self._zip.infolist():
            if info.is_dir():
                continue
            top, rel = _split_member(info.filename)
            tops.add(top)
            self._members[rel] = info
        if len(tops) > 1:
            raise _bad(f"members under several top-level folders {sorted(tops)}")

    def get_record(self, name: str) -> bytes:
        """Bytes of member `name`; ``KeyError``-free: a missing member is a ``RuntimeError``."""
        info = self._members.get(name)
        if info is None:
            raise RuntimeError(f"hookgrad.package failed locating file {name}: file not found")
        try:
            return self._zip.read(info)
        except (zipfile.BadZipFile, OSError, EOFError, ValueError, NotImplementedError) as e:
            raise _bad(f"member '{name}' cannot be read ({e})") from None

    def has_record(self, name: str) -> bool:
        return name in self._members

    def get_all_records(self) -> list[str]:
        return list(self._members)


class DirectoryReader:
    """Reads an unzipped package directory through the same interface as `ZipReader`."""

    def __init__(self, directory: str) -> None:
        self.directory = directory
        root = Path(directory).resolve()
        self._root = root
        self._records = sorted(
            p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file())

    def get_record(self, name: str) -> bytes:
        path = (self._root / name).resolve()
        if self._root not in path.parents or not path.is_file():
            raise RuntimeError(f"hookgrad.package failed locating file {name}: file not found")
        return path.read_bytes()

    def has_record(self, name: str) -> bool:
        return name in self._records

    def get_all_records(self) -> list[str]:
        return list(self._records)


def _split_member(filename: str) -> tuple[str, str]:
    """``(top folder, relative path)`` of a member, refusing paths that leave the folder."""
    if "\\" in filename or filename.startswith("/") or "\0" in filename:
        raise _bad(f"member path {filename!r} escapes the archive folder")
    parts = PurePosixPath(filename).parts
    if len(parts) < 2 or any(p in ("..", ".", "") for p in parts) or ":" in parts[0]:
        raise _bad(f"member path {filename!r} escapes the archive folder")
    return parts[0], "/".join(parts[1:])


def open_reader(file_or_buffer: Any) -> tuple[str, Any]:
    """``(filename, reader)`` for a path (ZIP or directory), a binary buffer or a reader."""
    if isinstance(file_or_buffer, (ZipReader, DirectoryReader)):
        return "<pytorch_file_reader>", file_or_buffer
    if isinstance(file_or_buffer, (str, os.PathLike)):
        filename = os.fspath(file_or_buffer)
        if os.path.isdir(filename):
            return filename, DirectoryReader(filename)
        return filename, ZipReader(filename)
    if isinstance(file_or_buffer, (bytes, bytearray)):
        # PyTorch fails on bytes too (it takes them for a path), with a RuntimeError
        raise RuntimeError("PackageImporter expects a path or a binary file object, got bytes; "
                           "wrap them in io.BytesIO")
    return "<binary>", ZipReader(file_or_buffer)


__all__ = ["ZipWriter", "ZipReader", "DirectoryReader", "open_reader"]
