"""The ``mpi`` engine: mpi4py + MPICH, non-blocking collectives polled from the calling thread.

Every collective runs in two stages (spec/distributed.md §11.3):

1. *handshake*: the encoded descriptor goes to every peer with ``Isend``/``Irecv`` on a
   duplicated control communicator. Point-to-point messages are non-overtaking, so descriptor
   ``k`` of each peer meets descriptor ``k`` here. A different descriptor raises ``collective
   mismatch`` on every rank; a peer whose descriptor never arrives is named by the timeout.
2. *data*: once the handshake of the oldest pending collective is complete, its non-blocking
   MPI collective (``Iallreduce``, ``Ibcast``, ...) is posted on the data communicator. Data
   stages are posted strictly in issue order, so MPI's per-communicator ordering holds.

Progress happens only inside ``progress``/``test``/``wait`` (no background thread), which the
reducer calls between gradient-ready events.
"""

from __future__ import annotations

import time
from collections import deque
from typing import Any

import numpy as np

from hookgrad.distributed._protocol import Descriptor, decode_matches, describe_encoded, \
    mismatch_error, timeout_error

_TAG = 7301


def import_mpi() -> Any:
    """``mpi4py.MPI``, or an ImportError that says how to install it."""
    try:
        from mpi4py import MPI
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError(
            "the 'mpi' backend needs mpi4py and an MPI library: pip install 'hookgrad[mpi]' "
            "(installs mpi4py and the mpich wheel, which ships mpiexec)") from exc
    return MPI


class MpiRequest:
    """One collective in flight: handshake requests, then the data request."""

    def __init__(self, comm: MpiComm, seq: int, desc: Descriptor, payload: Any) -> None:
        self.comm, self.seq, self.desc, self.payload = comm, seq, desc, payload
        self.mine = desc.encode(seq)
        self.peers = [q for q in range(comm.size) if q != comm.rank]
        self.inbox = {q: np.zeros(8, dtype=np.int64) for q in self.peers}
        ctrl = comm.ctrl
        self.hs = [ctrl.Isend(self.mine, dest=q, tag=_TAG) for q in self.peers]
        self.hs += [ctrl.Irecv(self.inbox[q], source=q, tag=_TAG) for q in self.peers]
        self.data_req: Any = None
        self.recv: Any = None
        self.done = False
        self.error: BaseException | None = None
        self.result: Any = None

    # -- stage 1 -------------------------------------------------------------------------------
    def handshake_done(self) -> bool:
        return bool(self.comm.MPI.Request.Testall(self.hs))

    def post_data(self) -> None:
        """Check the peers' descriptors, then post the data collective."""
        for q in self.peers:
            if not decode_matches(self.mine, self.inbox[q]):
                (a, wa), (b, wb) = sorted([(self.comm.rank, self.mine), (q, self.inbox[q])],
                                          key=lambda x: x[0])
                self.error = mismatch_error(self.comm.global_ranks[a], describe_encoded(wa),
                                            self.comm.global_ranks[b], describe_encoded(wb))
                return
        self.data_req = _post(self.comm, self, self.desc, self.payload)

    # -- stage 2 -------------------------------------------------------------------------------
    def test(self) -> bool:
        if self.done:
            return True
        self.comm.progress()
        if self.error is not None:
            raise self.error
        if self.comm.broken is not None:  # an earlier collective mismatched: the group is dead
            raise self.comm.broken
        if self.data_req is None or not self.data_req.Test():
            return False
        self.result = _finish(self)
        self.done = True
        return True

    def wait(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        spins = 0
        while not self.test():
            if time.monotonic() > deadline:
                raise self._timeout(timeout)
            spins += 1
            # spin briefly for latency, then back off so a 2-core box is not starved
            time.sleep(0 if spins < 2000 else 0.0002)

    def _timeout(self, timeout: float) -> BaseException:
        stuck = self.comm.queue[0] if self.comm.queue else self
        missing = [self.comm.global_ranks[q] for q, r in zip(
            stuck.peers, stuck.hs[len(stuck.peers):], strict=True) if not r.Test()]
        if not missing:  # every descriptor arrived; a peer stopped inside the data stage
            missing = [self.comm.global_ranks[q] for q in self.peers]
        return timeout_error(self.desc.kind, timeout, missing, self.comm.global_rank)


def _post(comm: MpiComm, req: MpiRequest, desc: Descriptor, payload: Any) -> Any:
    MPI, data = comm.MPI, comm.data
    if desc.kind == "all_reduce":
        return data.Iallreduce(MPI.IN_PLACE, payload, op=comm.ops[desc.arg])
    if desc.kind == "broadcast":
        return data.Ibcast(payload, root=desc.arg)
    if desc.kind == "all_gather":
        req.recv = np.empty((comm.size, *payload.shape), dtype=payload.dtype)
        return data.Iallgather(payload, req.recv)
    if desc.kind == "all_gather_object":
        sizes = [int(req.mine[6]) if q == comm.rank else int(req.inbox[q][6])
                 for q in range(comm.size)]
        req.recv = (np.empty(sum(sizes), dtype=np.uint8), sizes)
        sendbuf = np.frombuffer(payload, dtype=np.uint8)
        return data.Iallgatherv(sendbuf, [req.recv[0], sizes, MPI.BYTE])
    if desc.kind == "broadcast_object":
        root = desc.arg
        n = int(req.mine[6]) if root == comm.rank else int(req.inbox[root][6])
        req.recv = np.frombuffer(payload, dtype=np.uint8).copy() if root == comm.rank \
            else np.empty(n, dtype=np.uint8)
        return data.Ibcast(req.recv, root=root)
    return data.Ibarrier()


def _finish(req: MpiRequest) -> Any:
    kind = req.desc.kind
    if kind in ("all_reduce", "broadcast"):
        return req.payload
    if kind == "all_gather":
        return [req.recv[i] for i in range(req.comm.size)]
    if kind == "all_gather_object":
        buf, sizes = req.recv
        offsets = np.concatenate([[0], np.cumsum(sizes)])
        return [buf[offsets[i]:offsets[i + 1]].tobytes() for i in range(len(sizes))]
    if kind == "broadcast_object":
        return req.recv.tobytes()
    return None


class MpiComm:
    """One process's handle on an MPI communicator (a group)."""

    def __init__(self, comm: Any, global_ranks: list[int], global_rank: int) -> None:
        self.MPI = import_mpi()
        self.data, self.ctrl = comm, comm.Dup()
        self.rank, self.size = comm.Get_rank(), comm.Get_size()
        self.global_ranks, self.global_rank = list(global_ranks), global_rank
        self.seq = 0
        self.queue: deque[MpiRequest] = deque()
        self.broken: BaseException | None = None
        M = self.MPI
        self.ops = {0: M.SUM, 1: M.PROD, 2: M.MIN, 3: M.MAX, 4: M.SUM}

    def start(self, desc: Descriptor, payload: Any) -> MpiRequest:
        seq, self.seq = self.seq, self.seq + 1
        req = MpiRequest(self, seq, desc, payload)
        self.queue.append(req)
        self.progress()
        return req

    def progress(self) -> None:
        """Post the data stage of every leading collective whose handshake completed."""
        while self.queue and self.queue[0].handshake_done():
            req = self.queue.popleft()
            req.post_data()
            if req.error is not None and self.broken is None:
                self.broken = req.error

    def sub(self, ranks: list[int]) -> MpiComm | None:
        group = self.data.Get_group().Incl([self.global_ranks.index(r) for r in ranks])
        comm = self.data.Create_group(group)
        group.Free()
        if comm == self.MPI.COMM_NULL:
            return None
        return MpiComm(comm, list(ranks), self.global_rank)

    def close(self) -> None:
        self.ctrl.Free()
        if self.data != self.MPI.COMM_WORLD:
            self.data.Free()
