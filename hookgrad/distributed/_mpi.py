"""The ``mpi`` engine: mpi4py + MPICH, non-blocking collectives polled from the calling thread.

Every collective runs in two stages (contracts/distributed.md §11.3):

1. *handshake*: the encoded descriptor goes to every peer with ``Isend``/``Irecv`` on a
   duplicated control communicator. Point-to-point messages are non-overtaking, so descriptor
   ``k`` of each peer meets descriptor ``k`` here. A different descriptor raises ``collective
   mismatch`` on every rank; a peer whose descriptor never arrives is named by the timeout.
2. *data*: once the handshake of the oldest pending collective is complete, its non-blocking
   MPI collective (``Iallreduce``, ``Ibcast``, ...) is posted on the data communicator. Data
   stages are posted strictly in issue order, so MPI's per-communicator ordering holds.

Progress happens only inside ``progress``/``test``/``wait`` (no background thread), which the
reducer calls between gradient-ready events.

NOTE [Lost ranks]: a peer that stops must fail the others fast, naming it, never hang them.
- A rank leaving the process (normally or by an exception) sends an *exit notice* (its
  collective count and the reason) on every control communicator (`notify_exit`, run at exit).
  A peer waiting on collective ``k`` fails at once when the notice says the leaver issued fewer
  than ``k + 1`` collectives: that collective can never complete.
- A rank killed by a signal sends nothing; peers on the same host notice that its process is
  gone (``os.kill(pid, 0)``) within half a second. (Under ``mpiexec``'s default cleanup the
  launcher kills the others at once; the launcher's output names the dead process.)
- Anything else is named by the timeout. Every blocking step of setup (duplicating the
  communicator, creating sub-groups) is non-blocking and polled, so setup times out too.
"""

from __future__ import annotations

import atexit
import os
import pickle
import socket
import sys
import time
import weakref
from collections import deque
from typing import Any

import numpy as np

from hookgrad.distributed._protocol import Descriptor, DistBackendError, decode_matches, \
    describe_encoded, mismatch_error, p2p_timeout_error, timeout_error

_TAG = 7301
_EXIT_TAG = 7302
_LIVE: weakref.WeakSet[Any] = weakref.WeakSet()  # comms that send an exit notice
_exit_reason: list[str] = ["exited"]


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
            self.comm.check_peers(self.seq, self.desc.kind)
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

    def __init__(self, comm: Any, global_ranks: list[int], global_rank: int,
                 timeout: float) -> None:
        self.MPI = import_mpi()
        self.data, self.timeout = comm, timeout
        self.rank, self.size = comm.Get_rank(), comm.Get_size()
        self.global_ranks, self.global_rank = list(global_ranks), global_rank
        self.seq = 0
        self.queue: deque[MpiRequest] = deque()
        self.broken: BaseException | None = None
        M = self.MPI
        self.ops = {0: M.SUM, 1: M.SUM, 2: M.PROD, 3: M.MIN, 4: M.MAX, 5: M.BAND, 6: M.BOR,
                    7: M.BXOR}  # keyed by ReduceOp code (PyTorch's)
        self.peer_exits: dict[int, tuple[int, str]] = {}
        self.pids: dict[int, int] = {}
        self._next_check = 0.0
        self.ctrl = self._dup(comm)
        _install_exit_hooks()
        _LIVE.add(self)
        self._learn_peers()

    def _dup(self, comm: Any) -> Any:
        """``comm.Idup()`` polled under the timeout (a peer that never arrives is named)."""
        ctrl, req = comm.Idup()
        deadline, spins = time.monotonic() + self.timeout, 0
        while not req.Test():
            if time.monotonic() > deadline:
                peers = [r for i, r in enumerate(self.global_ranks) if i != self.rank]
                raise timeout_error("init_process_group", self.timeout, peers,
                                    self.global_rank)
            spins += 1
            time.sleep(0 if spins < 2000 else 0.0005)
        return ctrl

    def _learn_peers(self) -> None:
        """Exchange (host, pid) so a peer's death on this host is noticed without a timeout."""
        blob = _host_pid()
        req = self.start(Descriptor("all_gather_object", nbytes=len(blob)), blob)
        req.wait(self.timeout)
        me = socket.gethostname()
        rank_dir = os.environ.get("HOOKGRAD_RANK_DIR")  # set by hookgrad's launchers
        if rank_dir and self.global_ranks == list(range(self.size)):
            try:
                with open(os.path.join(rank_dir, str(os.getpid())), "w") as f:
                    f.write(str(self.rank))
            except OSError:
                pass  # only the launcher's message loses the rank number
        for q, blob in enumerate(req.result):
            host, pid = pickle.loads(blob)
            if q != self.rank and host == me:
                self.pids[q] = pid

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

    def p2p(self, kind: str, peer: int | None, tag: int, buf: np.ndarray) -> MpiP2P:
        """Start a point-to-point ``"send"`` to / ``"recv"`` from group rank ``peer`` (None:
        any rank)."""
        return MpiP2P(self, kind, peer, tag, buf)

    def sub(self, ranks: list[int]) -> MpiComm | None:
        group = self.data.Get_group().Incl([self.global_ranks.index(r) for r in ranks])
        comm = self.data.Create_group(group)
        group.Free()
        if comm == self.MPI.COMM_NULL:
            return None
        return MpiComm(comm, list(ranks), self.global_rank, self.timeout)

    def check_peers(self, seq: int, kind: str) -> None:
        """Raise when a peer left for good before issuing collective ``seq`` (NOTE [Lost
        ranks]); probes exit notices, and peer processes on this host twice a second."""
        now = time.monotonic()
        if now < self._next_check:
            return
        self._next_check = now + 0.5
        self.read_exit_notices()
        for q, (issued, reason) in sorted(self.peer_exits.items()):
            if issued <= seq:
                raise DistBackendError(
                    f"[rank {self.global_rank}] {kind} (collective #{seq}) failed: rank "
                    f"{self.global_ranks[q]} left after {issued} collectives ({reason})")
        for q, pid in sorted(self.pids.items()):
            if q not in self.peer_exits and not _alive(pid):
                raise DistBackendError(
                    f"[rank {self.global_rank}] {kind} (collective #{seq}) failed: rank "
                    f"{self.global_ranks[q]} (pid {pid}) died (killed or crashed)")

    def read_exit_notices(self) -> None:
        """Receive the exit notices peers sent so far into ``peer_exits``."""
        MPI = self.MPI
        while self.ctrl.Iprobe(source=MPI.ANY_SOURCE, tag=_EXIT_TAG, status=(st := MPI.Status())):
            blob = bytearray(st.Get_count(MPI.BYTE))
            self.ctrl.Recv([blob, MPI.BYTE], source=st.Get_source(), tag=_EXIT_TAG)
            self.peer_exits[st.Get_source()] = pickle.loads(bytes(blob))

    def notify_exit(self, reason: str) -> None:
        """Tell every peer this rank leaves after ``self.seq`` collectives (best effort)."""
        if self.MPI.Is_finalized():
            return
        blob = pickle.dumps((self.seq, reason))
        for q in range(self.size):
            if q != self.rank:
                try:
                    self.ctrl.Isend([blob, self.MPI.BYTE], dest=q, tag=_EXIT_TAG)
                except Exception:  # noqa: BLE001 - a dead or finalised peer: nothing to tell
                    pass

    def close(self) -> None:
        _LIVE.discard(self)
        self.ctrl.Free()
        if self.data != self.MPI.COMM_WORLD:
            self.data.Free()


def _host_pid() -> bytes:
    return pickle.dumps((socket.gethostname(), os.getpid()))


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # exists but belongs to someone else
        return True
    # a zombie (killed, not yet reaped by the launcher) still answers kill(pid, 0)
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return True


def set_exit_reason(text: str) -> None:
    """What the exit notice tells peers about why this rank left (first line kept)."""
    _exit_reason[0] = (text.splitlines() or ["exited"])[0][:300]


def _record_exception(exc_type: Any, exc: BaseException, tb: Any) -> None:
    """sys.excepthook: remember why this rank is leaving, for the exit notice."""
    _exit_reason[0] = f"it raised {exc_type.__name__}: {exc}".splitlines()[0][:300]
    _previous_hook(exc_type, exc, tb)


def _notify_all_at_exit() -> None:
    for comm in list(_LIVE):
        comm.notify_exit(_exit_reason[0])


def register_exit_notice(comm: Any) -> None:
    """Have ``comm.notify_exit(reason)`` called when this process exits (the store engine's
    comms use it too)."""
    _install_exit_hooks()
    _LIVE.add(comm)


_previous_hook: Any = None


def _install_exit_hooks() -> None:
    """Once, after mpi4py was imported: atexit handlers run last-registered first, so the
    notices go out before mpi4py's own handler finalises MPI."""
    global _previous_hook
    if _previous_hook is None:
        _previous_hook = sys.excepthook
        sys.excepthook = _record_exception
        atexit.register(_notify_all_at_exit)


class MpiP2P:
    """One point-to-point transfer in flight (``isend``/``irecv``) on the data communicator.

    MPI keeps point-to-point traffic apart from collectives on the same communicator, and
    messages between a pair of ranks with the same tag are non-overtaking, which is the matching
    rule ``torch.distributed`` documents for ``send``/``recv``. Buffers go as raw bytes so every
    dtype (float16, bool, complex) travels unchanged.
    """

    def __init__(self, comm: MpiComm, kind: str, peer: int | None, tag: int,
                 buf: np.ndarray) -> None:
        MPI = comm.MPI
        self.comm, self.kind, self.peer, self.tag = comm, kind, peer, tag
        self.status = MPI.Status()
        raw = [buf.reshape(-1).view(np.uint8), MPI.BYTE]
        if kind == "send":
            self.req = comm.data.Isend(raw, dest=peer, tag=tag)
        else:
            source = MPI.ANY_SOURCE if peer is None else peer
            self.req = comm.data.Irecv(raw, source=source, tag=tag)
        self.done = False
        self.source = peer
        self.result: Any = None
        self._next_check = 0.0
        self._gone_since: float | None = None

    def test(self) -> bool:
        if self.done:
            return True
        if not self.req.Test(self.status):
            now = time.monotonic()
            if now > self._next_check:  # twice a second, as for collectives
                self._next_check = now + 0.5
                self._check_peer()
            return False
        if self.kind == "recv":
            self.source = self.status.Get_source()
        self.done = True
        return True

    def _check_peer(self) -> None:
        """Fail when every peer this transfer can match has left (an exit notice) or died (a
        process on this host that is gone), naming it. A message sent just before its sender
        left may still be in flight, so the transfer gets one more second to complete."""
        comm = self.comm
        comm.read_exit_notices()
        peers = [self.peer] if self.peer is not None else \
            [q for q in range(comm.size) if q != comm.rank]
        gone = {}
        for q in peers:
            pid = comm.pids.get(q)
            if q in comm.peer_exits:
                gone[q] = f"left ({comm.peer_exits[q][1]})"
            elif pid is not None and not _alive(pid):
                gone[q] = f"(pid {pid}) died (killed or crashed)"
        if not peers or len(gone) < len(peers):
            return
        now = time.monotonic()
        if self._gone_since is None:
            self._gone_since = now
        elif now - self._gone_since >= 1.0:
            q = peers[0]
            raise DistBackendError(f"[rank {comm.global_rank}] {self.kind} (tag {self.tag}) "
                                   f"failed: rank {comm.global_ranks[q]} {gone[q]}")

    def wait(self, timeout: float) -> None:
        deadline, spins = time.monotonic() + timeout, 0
        while not self.test():
            if time.monotonic() > deadline:
                raise p2p_timeout_error(self, timeout)
            spins += 1
            time.sleep(0 if spins < 2000 else 0.0002)
