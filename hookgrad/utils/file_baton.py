"""A lock file that lets one process do a job while the others wait.

Mirrors: ``torch.utils.file_baton.FileBaton`` (used by extension builders so that one process
compiles while the others wait for the result). The lock is the file itself, created with
``O_EXCL`` so that exactly one process succeeds.
"""

from __future__ import annotations

import os
import time
import warnings

__all__ = ["FileBaton"]


class FileBaton:
    """A primitive, file-based synchronization utility. Mirrors: ``torch.utils.file_baton.FileBaton``."""

    def __init__(self, lock_file_path: str, wait_seconds: float = 0.1,
                 warn_after_seconds: float | None = None) -> None:
        self.lock_file_path = lock_file_path
        self.wait_seconds = wait_seconds
        self.fd: int | None = None
        self.warn_after_seconds = warn_after_seconds

    def try_acquire(self) -> bool:
        """True when this call created the lock file (this process holds the baton)."""
        try:
            self.fd = os.open(self.lock_file_path, os.O_CREAT | os.O_EXCL)
            return True
        except FileExistsError:
            return False

    def wait(self) -> None:
        """Sleep until the holder releases the baton (its lock file disappears)."""
        start = time.time()
        while os.path.exists(self.lock_file_path):
            time.sleep(self.wait_seconds)
            if self.warn_after_seconds is not None and time.time() - start > self.warn_after_seconds:
                warnings.warn(f'Waited on lock file "{self.lock_file_path}" for '
                              f"{self.warn_after_seconds} seconds.", stacklevel=2)
                start = time.time()

    def release(self) -> None:
        """Give the baton back: close and remove the lock file."""
        if self.fd is not None:
            os.close(self.fd)
        os.remove(self.lock_file_path)
