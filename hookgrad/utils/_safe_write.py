"""Write a file by path without ever replacing what is not ours to replace.

`write_file(path, write)` is what `hookgrad.save` does with a path:

* a symlink is followed: the file it points at is written, the link itself stays;
* a regular file (or a path that does not exist yet) is replaced atomically: the data goes to a
  temporary file in the same directory, is flushed and ``fsync``-ed, and ``os.replace`` moves it
  over the target, so a crash at any moment leaves either the old or the new file, whole;
* anything else (a character or block device such as ``/dev/null``, a FIFO) is written through,
  as ``open(path, "wb")`` - and so ``torch.save`` - does: swapping the directory entry would
  replace a device node for the whole system.

Temporary files are named ``.<name>.hookgrad-save.<host>.<pid>.<random>.tmp``. A save that was
killed leaves one behind; the next save to the same path removes those whose process (on this
host) no longer exists, so they never accumulate. Temporaries of live processes - a concurrent
save - are left alone.
"""

from __future__ import annotations

import contextlib
import os
import re
import socket
import stat
import tempfile
from collections.abc import Callable
from typing import Any

__all__ = ["write_file", "temp_prefix", "TEMP_MARK"]

TEMP_MARK = ".hookgrad-save."


def _host() -> str:
    """This host's name made safe for a file name (dots would confuse the parser)."""
    return re.sub(r"[^A-Za-z0-9_-]", "_", socket.gethostname())[:64] or "host"


def temp_prefix(target: str, pid: int | None = None) -> str:
    """Name prefix of the temporaries a save to `target` makes (the pid part included)."""
    pid = os.getpid() if pid is None else pid
    return f".{os.path.basename(target)}{TEMP_MARK}{_host()}.{pid}."


def _pid_alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError, OSError):
        return True  # exists but is not ours (or unknowable): keep its file
    return True


def remove_stale_temps(target: str) -> list[str]:
    """Delete temporaries of earlier saves to `target` whose process has died; their paths."""
    directory = os.path.dirname(target) or "."
    head = f".{os.path.basename(target)}{TEMP_MARK}{_host()}."
    removed = []
    try:
        names = os.listdir(directory)
    except OSError:
        return removed
    for name in names:
        if not (name.startswith(head) and name.endswith(".tmp")):
            continue
        pid_text = name[len(head):].split(".", 1)[0]
        if not pid_text.isdigit() or _pid_alive(int(pid_text)):
            continue
        path = os.path.join(directory, name)
        with contextlib.suppress(OSError):
            if stat.S_ISREG(os.lstat(path).st_mode):
                os.unlink(path)
                removed.append(path)
    return removed


def _resolve(path: str) -> str:
    """The path to write: symlinks (also dangling ones, also chains) resolved to their target."""
    return os.path.realpath(path) if os.path.islink(path) else path


def _check_zip_target(path: str, target: str, mode: int | None) -> None:
    """The ``RuntimeError``s PyTorch's zip writer raises before it writes a byte."""
    if not path:
        raise RuntimeError("[enforce fail at inline_container.cc:720] . invalid file name: ")
    if mode is not None and stat.S_ISDIR(mode):
        raise RuntimeError("[enforce fail at inline_container.cc:747] . open file failed with "
                           "strerror: Is a directory")
    parent = os.path.dirname(target)
    if parent and not os.path.isdir(parent):
        raise RuntimeError(f"Parent directory {parent} does not exist.")


def write_file(path: str, write: Callable[[Any], None], zip_format: bool = False) -> None:
    """Call ``write(binary_file)`` to produce the content of `path`; see the module docstring.

    Raises:
        RuntimeError: with `zip_format`, PyTorch's zip writer's errors for an empty name, a
            directory or a missing parent directory (nothing is written).
        IsADirectoryError: `path` is a directory (nothing is written), as ``open`` raises.
        OSError: the directory is not writable, the disk is full, ... (the old file is kept).
    """
    target = _resolve(path)
    try:
        mode = os.stat(target).st_mode
    except (FileNotFoundError, NotADirectoryError):
        mode = None
    if zip_format:
        _check_zip_target(path, target, mode)
    if mode is not None and stat.S_ISDIR(mode):
        raise IsADirectoryError(21, "Is a directory", path)
    if not path:
        raise FileNotFoundError(2, "No such file or directory", path)
    if mode is not None and not stat.S_ISREG(mode):
        with open(target, "wb") as fh:  # a device or FIFO: write through, never replace it
            write(_Stream(fh))
        return
    _atomic_write(target, write, None if mode is None else stat.S_IMODE(mode))


class _Stream:
    """A write-only view of a device or FIFO: no seek/tell, so writers stream sequentially
    (``/dev/null`` reports position 0 forever, which would corrupt ZIP offsets)."""

    def __init__(self, fh: Any) -> None:
        self._fh = fh

    def write(self, data: Any) -> int:
        return self._fh.write(data)

    def flush(self) -> None:
        self._fh.flush()


def _atomic_write(target: str, write: Callable[[Any], None], keep_mode: int | None) -> None:
    directory = os.path.dirname(os.path.abspath(target))
    remove_stale_temps(os.path.join(directory, os.path.basename(target)))
    fd, tmp = tempfile.mkstemp(prefix=temp_prefix(target), suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "wb") as fh:
            write(fh)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, keep_mode if keep_mode is not None else 0o666 & ~_umask())
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    _fsync_directory(directory)


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _fsync_directory(directory: str) -> None:
    """Make the rename itself durable (POSIX); a no-op where directories cannot be opened."""
    try:
        dir_fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(dir_fd)
    except OSError:
        pass
    finally:
        os.close(dir_fd)
