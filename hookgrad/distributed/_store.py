"""In-process key-value stores and the remaining error types of ``torch.distributed``.

`HashStore` is a real store for the ranks of one process (the threads engine's rendezvous
is `ThreadStore`); the stores across processes, `FileStore` and `TCPStore`, live in
``_file_store.py`` and ``_tcp_store.py``.
"""

from __future__ import annotations

import enum
import threading
import time
from datetime import timedelta
from typing import Any

from hookgrad.distributed._protocol import DistError


class DistStoreError(DistError):
    """A store operation failed (e.g. a wait timed out).

    Mirrors: ``torch.distributed.DistStoreError``.
    """


class DistNetworkError(DistError):
    """Mirrors: ``torch.distributed.DistNetworkError``."""


class QueueEmptyError(DistStoreError):
    """Mirrors: ``torch.distributed.QueueEmptyError``."""


class BuiltinCommHookType(enum.Enum):
    """Mirrors: ``torch.distributed.BuiltinCommHookType``."""

    ALLREDUCE = 0
    FP16_COMPRESS = 1


class Store:
    """Base class of key-value stores. Mirrors: ``torch.distributed.Store``."""


def _bytes(value: Any) -> bytes:
    return value if isinstance(value, bytes) else str(value).encode()


class HashStore(Store):
    """A thread-safe in-process key-value store (values are bytes).

    Example:
        >>> s = HashStore()
        >>> s.set("a", "1"); s.add("n", 2); s.add("n", 3)
        2
        5
        >>> s.get("a"), s.num_keys()
        (b'1', 2)

    Mirrors: ``torch.distributed.HashStore``.
    """

    def __init__(self) -> None:
        self._data: dict[str, bytes] = {}
        self._cond = threading.Condition()
        self.timeout = timedelta(minutes=5)

    def set(self, key: str, value: Any) -> None:
        """Mirrors: ``torch.distributed.Store.set``."""
        with self._cond:
            self._data[key] = _bytes(value)
            self._cond.notify_all()

    def get(self, key: str) -> bytes:
        """The value of ``key``, waiting up to ``timeout`` for it to be set.

        Raises:
            DistStoreError: The key did not appear in time.

        Mirrors: ``torch.distributed.Store.get``.
        """
        self.wait([key])
        with self._cond:
            return self._data[key]

    def add(self, key: str, amount: int) -> int:
        """Mirrors: ``torch.distributed.Store.add``."""
        with self._cond:
            value = int(self._data.get(key, b"0")) + int(amount)
            self._data[key] = str(value).encode()
            self._cond.notify_all()
            return value

    def compare_set(self, key: str, expected_value: Any, desired_value: Any) -> bytes:
        """Mirrors: ``torch.distributed.Store.compare_set``."""
        with self._cond:
            current = self._data.get(key)
            if (current is None and _bytes(expected_value) == b"") or \
                    current == _bytes(expected_value):
                self._data[key] = _bytes(desired_value)
                self._cond.notify_all()
            return self._data.get(key, _bytes(expected_value))

    def check(self, keys: list[str]) -> bool:
        """Mirrors: ``torch.distributed.Store.check``."""
        with self._cond:
            return all(k in self._data for k in keys)

    def delete_key(self, key: str) -> bool:
        """Mirrors: ``torch.distributed.Store.delete_key``."""
        with self._cond:
            return self._data.pop(key, None) is not None

    def num_keys(self) -> int:
        """Mirrors: ``torch.distributed.Store.num_keys``."""
        with self._cond:
            return len(self._data)

    def set_timeout(self, timeout: timedelta) -> None:
        """Mirrors: ``torch.distributed.Store.set_timeout``."""
        self.timeout = timeout

    def wait(self, keys: list[str], timeout: timedelta | None = None) -> None:
        """Block until every key is set.

        Raises:
            DistStoreError: Not all keys were set within the timeout.

        Mirrors: ``torch.distributed.Store.wait``.
        """
        limit = (timeout or self.timeout).total_seconds()
        deadline = time.monotonic() + limit
        with self._cond:
            while not all(k in self._data for k in keys):
                left = deadline - time.monotonic()
                if left <= 0:
                    raise DistStoreError("Wait timeout")
                self._cond.wait(left)


class PrefixStore(Store):
    """A view of ``store`` whose keys are prefixed with ``prefix + "/"``.

    Mirrors: ``torch.distributed.PrefixStore``.
    """

    def __init__(self, prefix: str, store: Any) -> None:
        self.underlying_store, self._prefix = store, prefix

    def _key(self, key: str) -> str:
        return f"{self._prefix}/{key}"

    def set(self, key: str, value: Any) -> None:
        """Mirrors: ``torch.distributed.Store.set``."""
        self.underlying_store.set(self._key(key), value)

    def get(self, key: str) -> bytes:
        """Mirrors: ``torch.distributed.Store.get``."""
        return self.underlying_store.get(self._key(key))

    def add(self, key: str, amount: int) -> int:
        """Mirrors: ``torch.distributed.Store.add``."""
        return self.underlying_store.add(self._key(key), amount)

    def check(self, keys: list[str]) -> bool:
        """Mirrors: ``torch.distributed.Store.check``."""
        return self.underlying_store.check([self._key(k) for k in keys])

    def wait(self, keys: list[str], timeout: timedelta | None = None) -> None:
        """Mirrors: ``torch.distributed.Store.wait``."""
        self.underlying_store.wait([self._key(k) for k in keys], timeout)

    def delete_key(self, key: str) -> bool:
        """Mirrors: ``torch.distributed.Store.delete_key``."""
        return self.underlying_store.delete_key(self._key(key))

    def multi_get(self, keys: list[str]) -> list[bytes]:
        """Mirrors: ``torch.distributed.Store.multi_get``."""
        return [self.get(k) for k in keys]
