"""The in-process ``threads`` engine: N ranks as N Python threads of one process (tests, CI).

Ranks share a `ThreadStore`. A collective deposits ``(descriptor, copy of the payload)`` in the
slot of its sequence number and completes once every rank of the group has deposited; each rank
then computes the result itself from the deposits, in rank order, so every rank gets
bit-identical results (contracts/distributed.md §11.4). Descriptors are compared first: a rank that
issued another collective raises ``collective mismatch`` on every rank. A rank that fails
(`ThreadStore.abort`) wakes every waiter with an error naming it, and a rank that never arrives
is named by the timeout.
"""

from __future__ import annotations

import threading
import time
from typing import Any

import numpy as np

from hookgrad.distributed._protocol import Descriptor, DistBackendError, describe_encoded, \
    mismatch_error, p2p_timeout_error, timeout_error

# ReduceOp codes (PyTorch's): SUM AVG PRODUCT MIN MAX BAND BOR BXOR
_REDUCE = {0: np.add, 1: np.add, 2: np.multiply, 3: np.minimum, 4: np.maximum,
           5: np.bitwise_and, 6: np.bitwise_or, 7: np.bitwise_xor}


class ThreadStore:
    """Rendezvous shared by the threads of one in-process group (``store=`` argument).

    Mirrors: ``torch.distributed.HashStore`` (role only: the rendezvous of in-process ranks).
    """

    def __init__(self, world_size: int) -> None:
        self.world_size = world_size
        self.cond = threading.Condition()
        self.slots: dict[tuple, dict[int, tuple[Descriptor, Any]]] = {}
        self.reads: dict[tuple, int] = {}
        self.failed: dict[int, str] = {}
        self.groups: dict[tuple, int] = {}
        # point-to-point messages: (comm key, destination, tag) -> [(source, array)] in send order
        self.mail: dict[tuple, list[tuple[int, np.ndarray]]] = {}
        self.joined = self.left = 0  # ranks that joined / destroyed a shared (store=None) store
        self.shared_key: tuple | None = None

    def abort(self, rank: int, exc: BaseException) -> None:
        """Record that ``rank`` failed, waking every rank blocked in a collective."""
        with self.cond:
            self.failed.setdefault(rank, f"{type(exc).__name__}: {exc}")
            self.cond.notify_all()


class ThreadRequest:
    """One collective in flight on the threads engine."""

    def __init__(self, comm: ThreadComm, seq: int, desc: Descriptor, payload: Any) -> None:
        self.comm, self.seq, self.desc, self.payload = comm, seq, desc, payload
        self.done = False
        self.result: Any = None

    def _ready(self) -> dict[int, tuple[Descriptor, Any]] | None:
        slot = self.comm.store.slots.get((self.comm.key, self.seq), {})
        return slot if len(slot) == self.comm.size else None

    def test(self) -> bool:
        if self.done:
            return True
        with self.comm.store.cond:
            slot = self._ready()
            if slot is None:
                self._check_failed()
                return False
            self._finish(slot)
        return True

    def wait(self, timeout: float) -> None:
        if self.done:
            return
        store = self.comm.store
        deadline = time.monotonic() + timeout
        with store.cond:
            while (slot := self._ready()) is None:
                self._check_failed()
                self._check_earlier()
                left = deadline - time.monotonic()
                if left <= 0:
                    have = store.slots.get((self.comm.key, self.seq), {})
                    missing = [self.comm.global_ranks[r] for r in range(self.comm.size)
                               if r not in have]
                    raise timeout_error(self.desc.kind, timeout, missing, self.comm.global_rank)
                store.cond.wait(min(left, 0.5))
            self._finish(slot)

    def _check_earlier(self) -> None:
        """Finish earlier collectives of this rank that nobody waited on, so a mismatch there
        is reported instead of this collective timing out (lock held)."""
        if self.comm.broken is not None:
            raise self.comm.broken
        for req in list(self.comm.outstanding):
            if req is self:
                break
            if not req.done and (slot := req._ready()) is not None:
                req._finish(slot)

    def _check_failed(self) -> None:
        failed = {r: m for r, m in self.comm.store.failed.items() if r != self.comm.global_rank}
        if failed:
            r, msg = sorted(failed.items())[0]
            raise DistBackendError(
                f"[rank {self.comm.global_rank}] {self.desc.kind} aborted: rank {r} failed "
                f"({msg})")

    def _finish(self, slot: dict[int, tuple[Descriptor, Any]]) -> None:
        """Check descriptors, compute this rank's result, release the slot (lock held)."""
        store, key = self.comm.store, (self.comm.key, self.seq)
        store.reads[key] = store.reads.get(key, 0) + 1
        if store.reads[key] == self.comm.size:
            del store.slots[key], store.reads[key]
        self.done = True
        if self in self.comm.outstanding:
            self.comm.outstanding.remove(self)
        for r in range(self.comm.size):
            if slot[r][0].key() != self.desc.key():
                a, b = sorted([(self.comm.rank, self.desc), (r, slot[r][0])], key=lambda x: x[0])
                self.comm.broken = mismatch_error(self.comm.global_ranks[a[0]],
                                     describe_encoded(a[1].encode(self.seq)),
                                     self.comm.global_ranks[b[0]],
                                     describe_encoded(b[1].encode(self.seq)))
                raise self.comm.broken
        self.result = _compute(self.desc, [slot[r][1] for r in range(self.comm.size)],
                               self.payload)


def _compute(desc: Descriptor, deposits: list[Any], payload: Any) -> Any:
    if desc.kind == "all_reduce":
        acc = deposits[0].copy()
        for arr in deposits[1:]:
            _REDUCE[desc.arg](acc, arr, out=acc)
        payload[...] = acc
        return payload
    if desc.kind == "broadcast":
        payload[...] = deposits[desc.arg]
        return payload
    if desc.kind == "all_gather":
        return [d.copy() for d in deposits]
    if desc.kind == "broadcast_object":
        return deposits[desc.arg]
    return list(deposits)  # all_gather_object (bytes per rank) and barrier


class ThreadComm:
    """One rank's handle on a group of the threads engine."""

    def __init__(self, store: ThreadStore, key: tuple, global_ranks: list[int],
                 global_rank: int) -> None:
        self.store, self.key, self.global_ranks = store, key, list(global_ranks)
        self.global_rank = global_rank
        self.rank, self.size = self.global_ranks.index(global_rank), len(global_ranks)
        self.seq = 0
        self.outstanding: list[ThreadRequest] = []
        self.broken: BaseException | None = None
        self.recvs: list[ThreadP2P] = []  # posted receives, matched in posting order

    def start(self, desc: Descriptor, payload: Any) -> ThreadRequest:
        seq, self.seq = self.seq, self.seq + 1
        deposit = payload.copy() if isinstance(payload, np.ndarray) else payload
        with self.store.cond:
            self.store.slots.setdefault((self.key, seq), {})[self.rank] = (desc, deposit)
            self.store.cond.notify_all()
        req = ThreadRequest(self, seq, desc, payload)
        self.outstanding.append(req)
        return req

    def progress(self) -> None:
        """Nothing to drive: deposits complete without the engine's help."""

    def p2p(self, kind: str, peer: int | None, tag: int, buf: np.ndarray) -> ThreadP2P:
        """Start a point-to-point ``"send"`` to / ``"recv"`` from group rank ``peer`` (None:
        any rank). A send is buffered (it completes at once); a receive completes when a
        message with its tag from its peer arrived."""
        req = ThreadP2P(self, kind, peer, tag, buf)
        with self.store.cond:
            if kind == "send":
                box = self.store.mail.setdefault((self.key, peer, tag), [])
                box.append((self.rank, buf.copy()))
                req.done = True
                self.store.cond.notify_all()
            else:
                self.recvs.append(req)
        return req

    def sub(self, ranks: list[int]) -> ThreadComm | None:
        """The comm of a new group over ``ranks`` (global ranks); None when not a member."""
        with self.store.cond:
            base = (self.key, tuple(ranks))
            n = self.store.groups.get((base, self.global_rank), 0)
            self.store.groups[(base, self.global_rank)] = n + 1
        if self.global_rank not in ranks:
            return None
        return ThreadComm(self.store, (*base, n), list(ranks), self.global_rank)

    def close(self) -> None:
        """Nothing to release."""


class ThreadP2P:
    """One point-to-point transfer on the threads engine.

    Receives are matched against the mailbox in the order they were posted, and messages from
    one sender with one tag in the order they were sent (MPI's non-overtaking rule, which
    ``torch.distributed`` documents for ``send``/``recv``).
    """

    def __init__(self, comm: ThreadComm, kind: str, peer: int | None, tag: int,
                 buf: np.ndarray) -> None:
        self.comm, self.kind, self.peer, self.tag, self.buf = comm, kind, peer, tag, buf
        self.done = False
        self.source = peer
        self.result: Any = None

    def _match(self) -> None:
        """Give waiting messages to the posted receives, oldest receive first (lock held)."""
        comm = self.comm
        for req in list(comm.recvs):
            box = comm.store.mail.get((comm.key, comm.rank, req.tag), [])
            for i, (src, arr) in enumerate(box):
                if req.peer is None or req.peer == src:
                    del box[i]
                    if arr.nbytes != req.buf.nbytes:
                        raise DistBackendError(
                            f"[rank {comm.global_rank}] recv (tag {req.tag}): rank "
                            f"{comm.global_ranks[src]} sent {arr.nbytes} bytes, the receive "
                            f"buffer holds {req.buf.nbytes}")
                    req.buf.reshape(-1).view(np.uint8)[...] = arr.reshape(-1).view(np.uint8)
                    req.source, req.done = src, True
                    comm.recvs.remove(req)
                    break

    def test(self) -> bool:
        if self.done:
            return True
        with self.comm.store.cond:
            self._match()
            if not self.done:
                self._check_failed()
        return self.done

    def _check_failed(self) -> None:
        comm = self.comm
        failed = {r: m for r, m in comm.store.failed.items() if r != comm.global_rank}
        if failed:
            r, msg = sorted(failed.items())[0]
            raise DistBackendError(
                f"[rank {comm.global_rank}] recv (tag {self.tag}) aborted: rank {r} failed "
                f"({msg})")

    def wait(self, timeout: float) -> None:
        store, deadline = self.comm.store, time.monotonic() + timeout
        with store.cond:
            while True:
                self._match()
                if self.done:
                    return
                self._check_failed()
                left = deadline - time.monotonic()
                if left <= 0:
                    raise p2p_timeout_error(self, timeout)
                store.cond.wait(min(left, 0.5))
