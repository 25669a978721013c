"""`FileStore`: a key-value store in one file, shared by every process that opens it.

Each operation locks the file (``fcntl.flock``), reads the whole table, applies the operation
and rewrites the table before unlocking, so operations of different processes never interleave.
Waiting polls every few milliseconds. The file format is hookgrad's own (JSON), not c10d's: a
hookgrad process and a PyTorch process cannot share one file.
"""

from __future__ import annotations

import fcntl
import json
import os
import time
from datetime import timedelta
from typing import Any

from hookgrad.distributed._kv import KVClient, apply, decode, encode

_USERS = "refcount/"  # how many FileStore objects use the file; the last one out deletes it


class FileStore(KVClient):
    """A store backed by the file ``file_name`` (created if missing).

    Example:
        >>> import os, tempfile
        >>> path = os.path.join(tempfile.mkdtemp(), "store")
        >>> s = FileStore(path, 1)
        >>> s.set("a", "1"); s.add("n", 5)
        5
        >>> s.get("a"), s.num_keys()
        (b'1', 3)

    Mirrors: ``torch.distributed.FileStore`` (``num_keys`` counts its user-count key, as
    c10d's does; the file is deleted when the last store using it is destroyed).
    """

    def __init__(self, file_name: str, world_size: int = -1) -> None:
        self.path, self._world_size = os.fspath(file_name), world_size
        self.timeout = timedelta(minutes=5)
        self._closed = False
        self._call("add", _USERS, 1)

    def _call(self, op: str, *args: Any) -> Any:
        with open(self.path, "a+b") as f:
            fcntl.flock(f, fcntl.LOCK_EX)
            try:
                f.seek(0)
                raw = f.read()
                data = {k: decode(v) for k, v in json.loads(raw).items()} if raw else {}
                result = apply(data, op, list(args))
                if op not in ("get", "check", "num_keys", "multi_get"):
                    f.seek(0)
                    f.truncate()
                    f.write(json.dumps({k: encode(v) for k, v in data.items()}).encode())
                    f.flush()
            finally:
                fcntl.flock(f, fcntl.LOCK_UN)
        return result

    def _wait_keys(self, keys: list[str], timeout: timedelta, get: bool) -> None:
        deadline = time.monotonic() + timeout.total_seconds()
        while not self._call("check", keys):
            if time.monotonic() > deadline:
                if get:
                    ms = int(timeout.total_seconds() * 1000)
                    raise RuntimeError(f"Timeout waiting for key: {keys[0]} after {ms} ms")
                raise RuntimeError("Wait timeout")
            time.sleep(0.005)

    def delete_key(self, key: str) -> bool:
        """Remove ``key``; True even when it was missing (as c10d's FileStore answers).

        Mirrors: ``torch.distributed.FileStore.delete_key``.
        """
        super().delete_key(key)
        return True

    def has_extended_api(self) -> bool:
        """False, as c10d's FileStore answers (its append and multi_get/set work anyway).

        Mirrors: ``torch.distributed.FileStore.has_extended_api``.
        """
        return False

    def clone(self) -> FileStore:
        """Another store object on the same file. Mirrors: ``torch.distributed.Store.clone``."""
        return FileStore(self.path, self._world_size)

    def queue_push(self, *args: Any, **kwargs: Any) -> Any:
        """Raises NotImplementedError, as c10d's FileStore does (also ``queue_pop``,
        ``queue_len``)."""
        raise NotImplementedError("queue support is not implemented.")

    queue_pop = queue_len = queue_push

    def __del__(self) -> None:
        if getattr(self, "_closed", True):
            return
        self._closed = True
        try:
            if self._call("add", _USERS, -1) <= 0:
                os.remove(self.path)
        except (OSError, ValueError):
            pass  # the file is gone already (or interpreter shutdown): nothing to clean
