"""Opening what `load` is given, so that no file can make it hang or read without end.

* A path is opened with ``O_NONBLOCK`` (a FIFO would otherwise block ``open`` until a writer
  comes) and checked with ``fstat`` on the open descriptor (no race between check and open):
  anything but a regular file - a device such as ``/dev/zero`` or ``/dev/urandom``, a FIFO, a
  socket, also behind a symlink - is refused without reading past its first byte, with the
  type PyTorch's reader fails with on its content: ``EOFError`` when it has nothing to read
  (``/dev/null``, a FIFO without a writer), ``pickle.UnpicklingError`` otherwise (those bytes
  are not a checkpoint), ``RuntimeError`` for ``mmap=True`` (not a zip file). A directory
  raises the ``IsADirectoryError`` that ``open`` gives, a missing path ``FileNotFoundError``,
  as in PyTorch.
* A file object backed by a descriptor is held to the same rule, except that an open pipe or
  socket is read as a stream (it ends when its writer closes it).
* A stream that cannot seek is read in chunks up to `MAX_STREAM_BYTES`; an endless one is
  refused at that point rather than filling memory.
"""

from __future__ import annotations

import contextlib
import io
import os
import pickle
import stat
from collections.abc import Iterator
from typing import Any

from hookgrad._serialization._errors import Malformed

__all__ = ["opened", "MAX_STREAM_BYTES"]

MAX_STREAM_BYTES = 1 << 32  # 4 GiB: more than a non-seekable checkpoint stream may deliver
_CHUNK = 1 << 20


def _kind(mode: int) -> str:
    for test, name in ((stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
                       (stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return name
    return "not a regular file"


def _has_data(fd: int) -> bool:
    """Whether a non-blocking read of one byte from `fd` gets one (it is never read on)."""
    try:
        blocking = os.get_blocking(fd)
        os.set_blocking(fd, False)
        try:
            return bool(os.read(fd, 1))
        finally:
            os.set_blocking(fd, blocking)
    except OSError:  # nothing there now (EAGAIN), or not readable
        return False


def _check_regular(fd: int, what: Any, streams_ok: bool = False, mmap: bool = False) -> None:
    mode = os.fstat(fd).st_mode
    if stat.S_ISDIR(mode):
        raise IsADirectoryError(21, "Is a directory", str(what))
    if streams_ok and (stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)):
        return  # an open pipe ends; it is read with a bound
    if not stat.S_ISREG(mode):
        message = (f"{what!s} is {_kind(mode)}, not a regular file (a checkpoint is read from "
                   "a regular file or a file object)")
        if mmap:
            kind: type = RuntimeError
        else:
            kind = pickle.UnpicklingError if _has_data(fd) else EOFError
        raise Malformed(message, kind)


def open_path(path: str, mmap: bool = False) -> io.BufferedReader:
    """A regular file opened for reading (see the module docstring)."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    try:
        _check_regular(fd, path, mmap=mmap)
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def _bounded_copy(f: Any) -> io.BytesIO:
    chunks, total = [], 0
    while True:
        chunk = f.read(_CHUNK)
        if not chunk:
            return io.BytesIO(b"".join(chunks))
        total += len(chunk)
        if total > MAX_STREAM_BYTES:
            raise Malformed(f"the stream delivered more than {MAX_STREAM_BYTES} bytes "
                            "(an endless stream?)")
        chunks.append(bytes(chunk))


def _seekable(f: Any) -> bool:
    try:
        return bool(f.seekable())
    except (AttributeError, OSError, ValueError):
        return False


@contextlib.contextmanager
def opened(f: Any, mmap: bool = False) -> Iterator[Any]:
    """A seekable binary file for `f` (a path or a file object); paths are closed after.

    As in PyTorch, ``bytes`` are not a path (PyTorch takes them for a file object).
    """
    if isinstance(f, (str, os.PathLike)) and not hasattr(f, "read"):
        with open_path(os.fsdecode(f), mmap) as fh:
            yield fh
        return
    if getattr(f, "closed", False) is True:  # before any read: Python's ValueError
        raise ValueError("I/O operation on closed file.")
    fileno = getattr(f, "fileno", None)
    if fileno is not None:
        try:
            fd = fileno()
        except (OSError, ValueError, io.UnsupportedOperation):
            fd = None
        if isinstance(fd, int):
            _check_regular(fd, getattr(f, "name", f), streams_ok=True)
    yield f if _seekable(f) else _bounded_copy(f)
