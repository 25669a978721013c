"""`TCPStore`: a key-value store served over TCP by the master process, reached by clients.

The master (``is_master=True``) runs a small server on daemon threads: one thread accepts
connections, one per connection answers its requests in order. The table lives in the server
(a dict guarded by a condition variable, so ``wait`` blocks in the server until the keys come).
Messages are length-prefixed JSON with bytes in base64 (`_kv.encode`): nothing received is
ever unpickled. Clients send one request at a time (a lock per client).
"""

from __future__ import annotations

import json
import socket
import struct
import threading
import time
from datetime import timedelta
from typing import Any

from hookgrad.distributed._kv import KVClient, apply, check_key, decode, encode, to_bytes
from hookgrad.distributed._store import DistNetworkError, DistStoreError, QueueEmptyError

_INIT = "init/"  # every client adds 1 on connecting; the master waits for world_size of them
_servers: dict[int, _Server] = {}  # port -> server of this process (multi_tenant reuse)


def _send(sock: socket.socket, obj: Any) -> None:
    body = json.dumps(obj).encode()
    sock.sendall(struct.pack("!I", len(body)) + body)


def _recv_exact(sock: socket.socket, n: int) -> bytes | None:
    chunks, left = [], n
    while left:
        chunk = sock.recv(left)
        if not chunk:
            return None
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def _recv(sock: socket.socket) -> Any:
    head = _recv_exact(sock, 4)
    if head is None:
        return None
    body = _recv_exact(sock, struct.unpack("!I", head)[0])
    return None if body is None else json.loads(body)


class _Server:
    """The master's table and the threads serving it."""

    def __init__(self, host: str, port: int) -> None:
        try:
            self.sock = socket.create_server((host, port), reuse_port=False)
        except OSError as exc:  # c10d's error type (EADDRINUSE and the like)
            raise DistNetworkError(f"The server socket has failed to listen on any local "
                                   f"network address. port: {port}, message: {exc}") from None
        self.port = self.sock.getsockname()[1]
        self.data: dict[str, bytes] = {}
        self.queues: dict[str, list[bytes]] = {}
        self.cond = threading.Condition()
        threading.Thread(target=self._accept, daemon=True, name="TCPStore-accept").start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:  # the listening socket was closed
                return
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        with conn:
            while (msg := _recv(conn)) is not None:
                try:
                    reply = {"ok": encode(self._handle(msg["op"], decode(msg["args"])))}
                except Exception as exc:  # noqa: BLE001 - sent back to the client
                    reply = {"err": type(exc).__name__, "msg": str(exc)}
                try:
                    _send(conn, reply)
                except OSError:
                    return

    def _handle(self, op: str, args: list[Any]) -> Any:
        with self.cond:
            if op in ("wait", "queue_pop"):
                keys, seconds = args[0], args[1]
                deadline = time.monotonic() + seconds
                ready = (lambda: all(k in self.data for k in keys)) if op == "wait" else \
                    (lambda: bool(self.queues.get(keys[0])))
                while not ready():
                    left = deadline - time.monotonic()
                    if left <= 0:
                        return False if op == "wait" else None
                    self.cond.wait(left)
                return True if op == "wait" else self.queues[keys[0]].pop(0)
            if op == "queue_push":
                self.queues.setdefault(args[0], []).append(args[1])
                result = None
            elif op == "queue_len":
                result = len(self.queues.get(args[0], []))
            else:
                result = apply(self.data, op, args)
            self.cond.notify_all()
            return result

    def close(self) -> None:
        self.sock.close()


class TCPStore(KVClient):
    """A store served by the master process over TCP; other processes connect as clients.

    ``port=0`` on the master picks a free port (``store.port`` says which). With
    ``wait_for_workers`` and a ``world_size``, the master's constructor waits until
    ``world_size`` stores (itself included) connected.

    Example:
        >>> from datetime import timedelta
        >>> master = TCPStore("127.0.0.1", 0, 2, is_master=True, wait_for_workers=False)
        >>> client = TCPStore("127.0.0.1", master.port, 2, timeout=timedelta(seconds=10))
        >>> client.set("k", "v"); master.get("k")
        b'v'

    Raises:
        DistNetworkError: No server answered at ``host_name:port`` within ``timeout``.
        DistStoreError: A wait (``get``, ``wait``, the workers' arrival) timed out.

    Mirrors: ``torch.distributed.TCPStore``.
    """

    def __init__(self, host_name: str, port: int, world_size: int | None = None,
                 is_master: bool = False, timeout: timedelta = timedelta(seconds=300),
                 wait_for_workers: bool = True, multi_tenant: bool = False,
                 master_listen_fd: int | None = None, use_libuv: bool = True) -> None:
        self.host, self.timeout, self.libuvBackend = host_name, timeout, bool(use_libuv)
        self._world_size = world_size
        self._server: _Server | None = None
        if is_master:
            server = _servers.get(port) if multi_tenant and port else None
            if server is None:
                server = _Server(host_name, port)
                _servers[server.port] = server
                self._server = server
            port = server.port
        self.port = port
        self._lock = threading.Lock()
        self._sock = self._connect()
        self._call("add", _INIT, 1)
        if is_master and wait_for_workers and world_size:
            deadline = time.monotonic() + timeout.total_seconds()
            while self._call("add", _INIT, 0) < world_size:
                if time.monotonic() > deadline:
                    raise DistStoreError(
                        f"Timed out after {int(timeout.total_seconds())} seconds waiting for "
                        f"clients. {self._call('add', _INIT, 0)}/{world_size} clients joined.")
                time.sleep(0.01)

    def _connect(self) -> socket.socket:
        deadline = time.monotonic() + self.timeout.total_seconds()
        while True:
            try:
                sock = socket.create_connection((self.host, self.port), timeout=1.0)
                sock.settimeout(None)
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                return sock
            except OSError:
                if time.monotonic() > deadline:
                    ms = int(self.timeout.total_seconds() * 1000)
                    raise DistNetworkError(
                        f"The client socket has timed out after {ms}ms while trying to connect "
                        f"to ({self.host}, {self.port}).") from None
                time.sleep(0.05)

    def _call(self, op: str, *args: Any) -> Any:
        with self._lock:
            try:
                _send(self._sock, {"op": op, "args": encode(list(args))})
                reply = _recv(self._sock)
            except OSError as exc:
                raise DistNetworkError(f"TCPStore {op} failed: {exc}") from None
        if reply is None:
            raise DistNetworkError("Failed to recv, got 0 bytes. Connection was likely closed. "
                                   "Did the remote server shutdown or crash?")
        if "err" in reply:
            kind = {"ValueError": ValueError, "TypeError": TypeError}.get(reply["err"],
                                                                          DistStoreError)
            raise kind(reply["msg"])
        return decode(reply["ok"])

    def _wait_keys(self, keys: list[str], timeout: timedelta, get: bool) -> None:
        if not self._call("wait", keys, timeout.total_seconds()):
            ms = int(timeout.total_seconds() * 1000)
            raise DistStoreError(f"wait timeout after {ms}ms, keys: "
                                 + ", ".join("/" + k for k in keys))

    def queue_push(self, key: str, value: Any) -> None:
        """Append ``value`` to the queue ``key``. Mirrors: ``TCPStore.queue_push``."""
        self._call("queue_push", check_key(key), to_bytes(value))

    def queue_pop(self, key: str, block: bool = True) -> bytes:
        """Take the oldest value of queue ``key`` (waiting up to ``timeout`` if ``block``).

        Raises:
            QueueEmptyError: Nothing came in time.

        Mirrors: ``torch.distributed.TCPStore.queue_pop``.
        """
        seconds = self.timeout.total_seconds() if block else 0.0
        value = self._call("queue_pop", [check_key(key)], seconds)
        if value is None:
            raise QueueEmptyError(f"queue_pop failed: queue {key!r} is empty")
        return value

    def queue_len(self, key: str) -> int:
        """Mirrors: ``torch.distributed.TCPStore.queue_len``."""
        return self._call("queue_len", check_key(key))

    def clone(self) -> TCPStore:
        """A new client of the same server. Mirrors: ``torch.distributed.Store.clone``."""
        return TCPStore(self.host, self.port, self._world_size, False, self.timeout)

    def __del__(self) -> None:
        sock = getattr(self, "_sock", None)
        if sock is not None:
            sock.close()
        server = getattr(self, "_server", None)
        if server is not None and _servers.get(server.port) is server:
            del _servers[server.port]
            server.close()
