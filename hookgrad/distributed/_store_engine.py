"""The ``store`` engine: ranks in separate processes that meet through a key-value store
(``init_process_group("gloo", init_method="tcp://..." | "env://" | "file://...")`` without an
MPI launcher, as ``torch.multiprocessing.spawn`` programs do).

A collective deposits ``(descriptor, payload)`` under the key of its sequence number and this
rank, waits until every rank of the group deposited, then computes its result from all deposits
in rank order exactly as the threads engine does (`_threads._compute`), so every rank gets the
same bits. A rank that leaves writes an exit notice; one killed without that chance is noticed
by its process id (published at setup, checked twice a second for peers on this host), so its
peers fail naming it instead of waiting for the timeout. The last rank to read a collective's deposits deletes them. Point-to-point messages
are keys ``p2p/<src>><dst>/<tag>/<n>`` numbered per sender, receiver and tag; receives take them
in the order they were posted. Every transfer goes through the store's server, so this engine
suits the small groups and tensors of tests and examples; ``mpiexec`` runs the ``mpi`` engine.
"""

from __future__ import annotations

import json
import os
import socket
import time
from datetime import timedelta
from typing import Any

import numpy as np

from hookgrad.distributed._protocol import Descriptor, DistBackendError, describe_encoded, \
    mismatch_error, p2p_timeout_error, timeout_error
from hookgrad.distributed._mpi import _alive
from hookgrad.distributed._store import DistNetworkError
from hookgrad.distributed._threads import _compute


def _pack(desc: Descriptor, payload: Any) -> bytes:
    head = {"kind": desc.kind, "dtype": desc.dtype, "shape": list(desc.shape), "arg": desc.arg,
            "nbytes": desc.nbytes, "array": isinstance(payload, np.ndarray)}
    if isinstance(payload, np.ndarray):
        head.update(adtype=payload.dtype.str, ashape=list(payload.shape))
        body = np.ascontiguousarray(payload).tobytes()
    else:
        body = payload if isinstance(payload, bytes) else b""
    return json.dumps(head).encode() + b"\n" + body


def _unpack(blob: bytes) -> tuple[Descriptor, Any]:
    raw_head, body = blob.split(b"\n", 1)
    head = json.loads(raw_head)
    desc = Descriptor(head["kind"], head["dtype"], tuple(head["shape"]), head["arg"],
                      head["nbytes"])
    if head["array"]:
        arr = np.frombuffer(body, dtype=np.dtype(head["adtype"])).reshape(head["ashape"]).copy()
        return desc, arr
    return desc, body


class StoreRequest:
    """One collective in flight on the store engine."""

    def __init__(self, comm: StoreComm, seq: int, desc: Descriptor, payload: Any) -> None:
        self.comm, self.seq, self.desc, self.payload = comm, seq, desc, payload
        self.keys = [comm.slot(seq, r) for r in range(comm.size)]
        self.done = False
        self.result: Any = None

    def test(self) -> bool:
        if not self.done and self.comm.store.check(self.keys):
            self._finish()
        return self.done

    def wait(self, timeout: float) -> None:
        if self.done:
            return
        try:
            self._wait(timeout)
        except DistNetworkError as exc:  # the store's server (rank 0's process) is gone
            raise DistBackendError(
                f"[rank {self.comm.global_rank}] {self.desc.kind} (collective #{self.seq}) "
                f"failed: the store is unreachable (its host, rank 0, may have left): "
                f"{exc}") from None
        self._finish()

    def _wait(self, timeout: float) -> None:
        store, deadline = self.comm.store, time.monotonic() + timeout
        while not store.check(self.keys):
            left = deadline - time.monotonic()
            missing = [r for r, k in enumerate(self.keys) if not store.check([k])]
            self.comm.check_exits(missing, self.seq, self.desc.kind)
            if left <= 0:
                raise timeout_error(self.desc.kind, timeout,
                                    [self.comm.global_ranks[r] for r in missing],
                                    self.comm.global_rank)
            try:  # blocks in the store (TCPStore: in its server) for a while
                store.wait(self.keys, timedelta(seconds=min(left, 0.5)))
            except DistNetworkError:
                raise
            except Exception:  # noqa: BLE001 - not all there yet; the loop decides
                pass

    def _finish(self) -> None:
        comm = self.comm
        deposits = [_unpack(b) for b in comm.store.multi_get(self.keys)]
        if comm.store.add(comm.slot(self.seq, "reads"), 1) == comm.size:
            for key in (*self.keys, comm.slot(self.seq, "reads")):
                comm.store.delete_key(key)
        self.done = True
        for r, (desc, _) in enumerate(deposits):
            if desc.key() != self.desc.key():
                a, b = sorted([(comm.rank, self.desc), (r, desc)], key=lambda x: x[0])
                raise mismatch_error(comm.global_ranks[a[0]],
                                     describe_encoded(a[1].encode(self.seq)),
                                     comm.global_ranks[b[0]],
                                     describe_encoded(b[1].encode(self.seq)))
        self.result = _compute(self.desc, [d for _, d in deposits], self.payload)


class StoreP2P:
    """One point-to-point transfer on the store engine (a send completes once stored)."""

    def __init__(self, comm: StoreComm, kind: str, peer: int | None, tag: int,
                 buf: np.ndarray) -> None:
        self.comm, self.kind, self.peer, self.tag, self.buf = comm, kind, peer, tag, buf
        self.done = kind == "send"
        self.source = peer
        self.result: Any = None

    def test(self) -> bool:
        if not self.done:
            self.comm.match()
        return self.done

    def wait(self, timeout: float) -> None:
        now = time.monotonic()
        deadline, next_check = now + timeout, now + 0.5
        while not self.test():
            now = time.monotonic()
            if now > deadline:
                raise p2p_timeout_error(self, timeout)
            if now >= next_check and self.peer is not None:  # a peer that left never sends
                next_check = now + 0.5
                self.comm.check_peer_left(self.peer, f"{self.kind} (tag {self.tag})")
            time.sleep(0.002)


class StoreComm:
    """One rank's handle on a group of the store engine."""

    def __init__(self, store: Any, key: tuple, global_ranks: list[int], global_rank: int,
                 timeout: float) -> None:
        self.store, self.key, self.global_ranks = store, key, list(global_ranks)
        self.global_rank, self.timeout = global_rank, timeout
        self.rank, self.size = self.global_ranks.index(global_rank), len(global_ranks)
        self.prefix = "/".join(map(str, key))
        self.seq = 0
        self.groups: dict[tuple, int] = {}
        self.sent: dict[tuple[int, int], int] = {}
        self.taken: dict[tuple[int, int], int] = {}
        self.recvs: list[StoreP2P] = []
        self.pids: dict[int, int | None] = {}  # group rank -> pid of a peer on this host
        if key == ("default_pg",):
            from hookgrad.distributed._mpi import register_exit_notice

            register_exit_notice(self)
            self.store.set(self._pid_key(global_rank), f"{socket.gethostname()}|{os.getpid()}")

    @staticmethod
    def _pid_key(global_rank: int) -> str:
        return f"default_pg/pid/{global_rank}"

    def _peer_pid(self, r: int) -> int | None:
        """The pid of group rank `r` when it runs on this host (None elsewhere or unknown)."""
        if r not in self.pids:
            key = self._pid_key(self.global_ranks[r])
            if not self.store.check([key]):
                return None  # not published yet: asked again next time
            host, pid = self.store.get(key).decode().rsplit("|", 1)
            self.pids[r] = int(pid) if host == socket.gethostname() else None
        return self.pids[r]

    def slot(self, seq: int, who: Any) -> str:
        return f"{self.prefix}/c{seq}/{who}"

    def start(self, desc: Descriptor, payload: Any) -> StoreRequest:
        seq, self.seq = self.seq, self.seq + 1
        self.store.set(self.slot(seq, self.rank), _pack(desc, payload))
        return StoreRequest(self, seq, desc, payload)

    def progress(self) -> None:
        """Nothing to drive: deposits complete in the store."""

    def _mail(self, src: int, dst: int, tag: int, n: int) -> str:
        return f"{self.prefix}/p2p/{src}>{dst}/{tag}/{n}"

    def p2p(self, kind: str, peer: int | None, tag: int, buf: np.ndarray) -> StoreP2P:
        req = StoreP2P(self, kind, peer, tag, buf)
        if kind == "send":
            n = self.sent.get((peer, tag), 0)
            self.sent[(peer, tag)] = n + 1  # type: ignore[index]
            self.store.set(self._mail(self.rank, peer, tag, n), buf.tobytes())  # type: ignore
        else:
            self.recvs.append(req)
        return req

    def match(self) -> None:
        """Give stored messages to the posted receives, oldest receive first."""
        # a (peer, tag) an older receive is still waiting for is not given to a younger one,
        # even if its next message lands between the two checks (MPI's posting order)
        blocked: set[tuple[int, int]] = set()
        for req in list(self.recvs):
            peers = [req.peer] if req.peer is not None else range(self.size)
            for q in peers:
                if (q, req.tag) in blocked:
                    continue
                n = self.taken.get((q, req.tag), 0)
                key = self._mail(q, self.rank, req.tag, n)
                if not self.store.check([key]):
                    continue
                data = self.store.get(key)
                self.store.delete_key(key)
                self.taken[(q, req.tag)] = n + 1
                if len(data) != req.buf.nbytes:
                    raise DistBackendError(
                        f"[rank {self.global_rank}] recv (tag {req.tag}): rank "
                        f"{self.global_ranks[q]} sent {len(data)} bytes, the receive buffer "
                        f"holds {req.buf.nbytes}")
                req.buf.reshape(-1).view(np.uint8)[...] = np.frombuffer(data, dtype=np.uint8)
                req.source, req.done = q, True
                self.recvs.remove(req)
                break
            if not req.done:
                blocked.update((q, req.tag) for q in peers)

    def sub(self, ranks: list[int]) -> StoreComm | None:
        """The comm of a new group over ``ranks`` (global ranks); None when not a member."""
        base = (*self.key, "g" + "_".join(map(str, ranks)))
        n = self.groups.get(base, 0)
        self.groups[base] = n + 1
        if self.global_rank not in ranks:
            return None
        return StoreComm(self.store, (*base, n), list(ranks), self.global_rank, self.timeout)

    def check_exits(self, ranks: list[int], seq: int, kind: str) -> None:
        """Raise when one of ``ranks`` (group ranks) left before issuing collective ``seq``
        (its exit notice, written at interpreter exit, says how many it issued)."""
        keys = [f"{self.prefix}/exited/{r}" for r in ranks]
        for r, key in zip(ranks, keys, strict=True):
            if self.store.check([key]):
                issued, reason = self.store.get(key).decode().split("|", 1)
                if int(issued) <= seq:
                    raise DistBackendError(
                        f"[rank {self.global_rank}] {kind} (collective #{seq}) failed: rank "
                        f"{self.global_ranks[r]} left after {issued} collectives ({reason})")
            elif r != self.rank:
                pid = self._peer_pid(r)
                if pid is not None and not _alive(pid):
                    raise DistBackendError(
                        f"[rank {self.global_rank}] {kind} (collective #{seq}) failed: rank "
                        f"{self.global_ranks[r]} (pid {pid}) died (killed or crashed)")

    def check_peer_left(self, r: int, what: str) -> None:
        """Raise when group rank `r`, whom a point-to-point transfer waits for, left (its exit
        notice) or died (its process is gone)."""
        key = f"{self.prefix}/exited/{r}"
        if self.store.check([key]):
            reason = self.store.get(key).decode().split("|", 1)[1]
            raise DistBackendError(f"[rank {self.global_rank}] {what} failed: rank "
                                   f"{self.global_ranks[r]} left ({reason})")
        pid = self._peer_pid(r)
        if pid is not None and not _alive(pid):
            raise DistBackendError(f"[rank {self.global_rank}] {what} failed: rank "
                                   f"{self.global_ranks[r]} (pid {pid}) died (killed or crashed)")

    def notify_exit(self, reason: str) -> None:
        """Leave an exit notice: how many collectives this rank issued and why it left."""
        try:
            self.store.set(f"{self.prefix}/exited/{self.rank}", f"{self.seq}|{reason}")
        except Exception:  # noqa: BLE001 - the store is gone too: nothing to tell
            pass

    def close(self) -> None:
        """Leave the default group: wait (briefly) until every rank left, because the store's
        server lives in rank 0's process and a peer may still be reading the last
        collective's deposits when rank 0 is done. Sub-groups release nothing."""
        if self.key != ("default_pg",):
            return
        keys = [f"{self.prefix}/left/{r}" for r in range(self.size)]
        try:
            # rank 0 may see this key and exit before the server's reply to this `set` went
            # out (its server threads end with its process): a lost connection here means the
            # key arrived or the server is gone, and either way there is nothing to wait for
            self.store.set(keys[self.rank], "1")
            self.store.wait(keys, timedelta(seconds=min(self.timeout, 30.0)))
        except Exception:  # noqa: BLE001 - a peer that never leaves cleanly: nothing to wait for
            pass
