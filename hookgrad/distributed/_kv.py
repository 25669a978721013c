"""What `FileStore` and `TCPStore` share: the key-value operations on a ``dict[str, bytes]``
(`apply`) and the client-side `Store` methods built on two primitives, ``_call`` (run one
operation where the data lives) and ``_wait_keys`` (block until keys exist).

Semantics are c10d's: values are bytes (a ``str`` is UTF-8 encoded), ``add`` keeps a decimal
integer, ``compare_set`` with an empty expected value creates a missing key, and every store
counts one key of its own in ``num_keys`` (c10d's rendezvous bookkeeping key).
"""

from __future__ import annotations

import base64
from datetime import timedelta
from typing import Any

from hookgrad.distributed._store import Store


INTERNAL = ("init/", "refcount/")  # the stores' own bookkeeping keys (not in list_keys)


def to_bytes(value: Any) -> bytes:
    if isinstance(value, (bytes, bytearray)):
        return bytes(value)
    if isinstance(value, str):
        return value.encode()
    if isinstance(value, list) and all(isinstance(v, int) for v in value):
        return bytes(value)  # c10d accepts a list of byte values
    raise TypeError(f"incompatible function arguments: a store value must be str or bytes, got "
                    f"{type(value).__name__}")


def check_key(key: Any) -> str:
    if not isinstance(key, str):
        raise TypeError(f"incompatible function arguments: a store key must be a str, got "
                        f"{type(key).__name__}")
    return key


def apply(data: dict[str, bytes], op: str, args: list[Any]) -> Any:
    """Run one store operation on ``data`` (keys present where the caller waited for them)."""
    if op == "set":
        data[args[0]] = args[1]
        return None
    if op == "get":
        return data[args[0]]
    if op == "add":
        old = data.get(args[0], b"0")
        try:
            value = int(old) + int(args[1])
        except ValueError:
            raise ValueError(f"the value of key {args[0]!r} is not an integer: {old!r}") from None
        data[args[0]] = str(value).encode()
        return value
    if op == "append":
        data[args[0]] = data.get(args[0], b"") + args[1]
        return None
    if op == "compare_set":
        key, expected, desired = args
        current = data.get(key)
        if (current is None and expected == b"") or current == expected:
            data[key] = desired
            return desired
        return expected if current is None else current
    if op == "check":
        return all(k in data for k in args[0])
    if op == "delete_key":
        return data.pop(args[0], None) is not None
    if op == "num_keys":
        return len(data)
    if op == "list_keys":
        return sorted(k for k in data if k not in INTERNAL)
    if op == "multi_set":
        data.update(zip(args[0], args[1], strict=True))
        return None
    if op == "multi_get":
        return [data[k] for k in args[0]]
    raise ValueError(f"unknown store operation {op!r}")


def encode(obj: Any) -> Any:
    """JSON-able form of operation arguments and results (bytes as base64): the TCP store's
    wire format is JSON, so a peer can never make this process unpickle anything."""
    if isinstance(obj, bytes):
        return {"b": base64.b64encode(obj).decode()}
    if isinstance(obj, (list, tuple)):
        return [encode(o) for o in obj]
    return obj


def decode(obj: Any) -> Any:
    if isinstance(obj, dict) and "b" in obj:
        return base64.b64decode(obj["b"])
    if isinstance(obj, list):
        return [decode(o) for o in obj]
    return obj


class KVClient(Store):
    """The `Store` methods of c10d, on a store reached through ``_call``/``_wait_keys``."""

    timeout: timedelta

    def _call(self, op: str, *args: Any) -> Any:  # pragma: no cover - abstract
        raise NotImplementedError

    def _wait_keys(self, keys: list[str], timeout: timedelta, get: bool) -> None:
        raise NotImplementedError  # pragma: no cover - abstract

    def set(self, key: str, value: Any) -> None:
        """Mirrors: ``torch.distributed.Store.set``."""
        self._call("set", check_key(key), to_bytes(value))

    def get(self, key: str) -> bytes:
        """The value of ``key``, waiting up to ``timeout`` for it to be set.

        Mirrors: ``torch.distributed.Store.get``.
        """
        self._wait_keys([check_key(key)], self.timeout, True)
        return self._call("get", key)

    def add(self, key: str, amount: int) -> int:
        """Add ``amount`` to the integer at ``key`` (0 when missing); returns the new value.

        Mirrors: ``torch.distributed.Store.add``.
        """
        return self._call("add", check_key(key), int(amount))

    def append(self, key: str, value: Any) -> None:
        """Mirrors: ``torch.distributed.Store.append``."""
        self._call("append", check_key(key), to_bytes(value))

    def compare_set(self, key: str, expected_value: Any, desired_value: Any) -> bytes:
        """Set ``key`` to ``desired_value`` if it holds ``expected_value`` (or is missing and
        ``expected_value`` is empty); returns the value it holds afterwards (``expected_value``
        for a missing key left alone).

        Mirrors: ``torch.distributed.Store.compare_set``.
        """
        return self._call("compare_set", check_key(key), to_bytes(expected_value),
                          to_bytes(desired_value))

    def check(self, keys: list[str]) -> bool:
        """Whether every key is set (no waiting). Mirrors: ``torch.distributed.Store.check``."""
        return self._call("check", [check_key(k) for k in keys])

    def delete_key(self, key: str) -> bool:
        """Mirrors: ``torch.distributed.Store.delete_key``."""
        return self._call("delete_key", check_key(key))

    def num_keys(self) -> int:
        """Keys set, plus the store's own bookkeeping key (as c10d counts).

        Mirrors: ``torch.distributed.Store.num_keys``.
        """
        return self._call("num_keys")

    def multi_set(self, keys: list[str], values: list[Any]) -> None:
        """Mirrors: ``torch.distributed.Store.multi_set``."""
        self._call("multi_set", [check_key(k) for k in keys], [to_bytes(v) for v in values])

    def multi_get(self, keys: list[str]) -> list[bytes]:
        """Mirrors: ``torch.distributed.Store.multi_get``."""
        self._wait_keys([check_key(k) for k in keys], self.timeout, True)
        return self._call("multi_get", list(keys))

    def wait(self, keys: list[str], timeout: timedelta | None = None) -> None:
        """Block until every key is set (``timeout``, else the store's).

        Mirrors: ``torch.distributed.Store.wait``.
        """
        self._wait_keys([check_key(k) for k in keys], timeout or self.timeout, False)

    def set_timeout(self, timeout: timedelta) -> None:
        """Mirrors: ``torch.distributed.Store.set_timeout``."""
        self.timeout = timeout

    def list_keys(self) -> list[str]:
        """The keys set (the store's bookkeeping key left out).

        Mirrors: ``torch.distributed.Store.list_keys``.
        """
        return self._call("list_keys")

    def barrier(self, key: str, world_size: int, timeout: timedelta | None = None) -> None:
        """Block until ``world_size`` callers reached the barrier named ``key`` (one key per
        barrier).

        Mirrors: ``torch.distributed.Store.barrier``.
        """
        if self.add(f"{key}/arrived", 1) >= int(world_size):
            self.set(f"{key}/last", "1")
        self.wait([f"{key}/last"], timeout)

    def has_extended_api(self) -> bool:
        """Mirrors: ``torch.distributed.Store.has_extended_api`` (append, multi_get/set)."""
        return True
