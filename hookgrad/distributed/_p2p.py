"""Point-to-point communication: ``send``/``recv``/``isend``/``irecv``, `P2POp` with
``batch_isend_irecv``, and ``send_object_list``/``recv_object_list``.

Each engine moves the bytes (``comm.p2p``: MPI ``Isend``/``Irecv`` on the group's communicator,
or a mailbox in the threads engine's store); this module resolves ranks the way PyTorch's
``distributed_c10d`` does (``dst``/``src`` are global ranks, ``group_dst``/``group_src`` ranks
inside ``group``) and wraps each transfer in a `Work`.
"""

from __future__ import annotations

import pickle
from typing import Any

import numpy as np

from hookgrad.distributed._work import Work
from hookgrad.distributed.collectives import _array, _bump
from hookgrad.distributed.process_group import GroupMember, ProcessGroup, _resolve, \
    get_global_rank, get_group_rank


class _P2PWork(Work):
    """The `Work` of one send or receive; ``_source_rank()`` names a receive's sender.

    Mirrors: ``torch.distributed.Work`` as returned by ``isend``/``irecv``.
    """

    def _source_rank(self) -> int:
        """The group rank the message came from (PyTorch's ``Work._source_rank``)."""
        self.wait()
        return int(self._request.source)


def _canonical(group: ProcessGroup, global_rank: int | None, group_rank: int | None,
               return_global: bool = False) -> int:
    """A rank given either globally or inside ``group`` (PyTorch's
    ``_canonicalize_group_rank``)."""
    if group_rank is not None:
        if global_rank is not None:
            raise ValueError("Can't specify both group_rank and global_rank")
        return get_global_rank(group, group_rank) if return_global else group_rank
    if global_rank is None:
        raise ValueError("Must specify global_rank or group_rank")
    return global_rank if return_global else get_group_rank(group, global_rank)


def _not_self(group: ProcessGroup, rank: int, what: str) -> None:
    if group.rank() == rank:
        raise ValueError(f"Invalid {what} rank: {what} rank should not be the same as the rank "
                         "of the current process.")


def _start(pg: ProcessGroup, kind: str, tensor: Any, peer: int | None, tag: int) -> _P2PWork:
    arr = _array(tensor)
    if not arr.flags.c_contiguous:  # gloo's check (the engines move the buffer in place)
        raise RuntimeError("input tensor has to be contiguous")
    if peer is not None and not 0 <= peer < pg.size():
        raise ValueError(f"Invalid {'destination' if kind == 'send' else 'source'} rank {peer}: "
                         f"the group has {pg.size()} ranks")
    request = pg._comm.p2p(kind, peer, int(tag), arr)

    def finish(_: Any) -> None:
        if kind == "recv":
            _bump(tensor)

    return _P2PWork(pg, request, [tensor], finish)


def isend(tensor: Any, dst: int | None = None, group: ProcessGroup | None = None,
          tag: int = 0, group_dst: int | None = None) -> Work | None:
    """Start sending ``tensor`` to rank ``dst`` (global) or ``group_dst`` (in ``group``).

    Returns a `Work` (None on a rank outside ``group``). Sending to oneself is allowed.

    Mirrors: ``torch.distributed.isend``.
    """
    if group is GroupMember.NON_GROUP_MEMBER:
        return None
    pg = _resolve(group)
    return _start(pg, "send", tensor, _canonical(pg, dst, group_dst), tag)


def irecv(tensor: Any, src: int | None = None, group: ProcessGroup | None = None,
          tag: int = 0, group_src: int | None = None) -> Work | None:
    """Start receiving into ``tensor`` from rank ``src`` (global), ``group_src`` (in ``group``),
    or from any rank when both are None.

    Mirrors: ``torch.distributed.irecv``.
    """
    if group is GroupMember.NON_GROUP_MEMBER:
        return None
    pg = _resolve(group)
    peer = None if src is None and group_src is None else _canonical(pg, src, group_src)
    return _start(pg, "recv", tensor, peer, tag)


def send(tensor: Any, dst: int | None = None, group: ProcessGroup | None = None, tag: int = 0,
         group_dst: int | None = None) -> None:
    """Send ``tensor`` to ``dst`` and wait until it left.

    Raises:
        ValueError: ``dst`` is this rank.

    Mirrors: ``torch.distributed.send``.
    """
    pg = _resolve(group)
    peer = _canonical(pg, dst, group_dst)
    _not_self(pg, peer, "destination")
    work = isend(tensor, group=pg, tag=tag, group_dst=peer)
    if work is not None:
        work.wait()


def recv(tensor: Any, src: int | None = None, group: ProcessGroup | None = None, tag: int = 0,
         group_src: int | None = None) -> int:
    """Receive into ``tensor``; returns the sender's global rank (-1 outside ``group``).

    Raises:
        ValueError: The sender is this rank.

    Mirrors: ``torch.distributed.recv``.
    """
    work = irecv(tensor, src=src, group=group, tag=tag, group_src=group_src)
    if work is None:
        return -1
    work.wait()
    if src is None:
        pg = _resolve(group)
        if group_src is None:
            group_src = work._source_rank()  # type: ignore[attr-defined]
        _not_self(pg, group_src, "source")
        src = get_global_rank(group, group_src)
    return src


class P2POp:
    """One ``isend`` or ``irecv`` to run in `batch_isend_irecv`.

    Raises:
        ValueError: ``op`` is neither ``isend`` nor ``irecv``.

    Mirrors: ``torch.distributed.P2POp``.
    """

    def __new__(cls, op: Any, tensor: Any, peer: int | None = None,
                group: ProcessGroup | None = None, tag: int = 0,
                group_peer: int | None = None) -> P2POp:
        if op is not isend and op is not irecv:
            raise ValueError("Invalid ``op``. Expected ``op`` to be of type "
                             "``torch.distributed.isend`` or ``torch.distributed.irecv``.")
        _array(tensor)
        return object.__new__(cls)

    def __init__(self, op: Any, tensor: Any, peer: int | None = None,
                 group: ProcessGroup | None = None, tag: int = 0,
                 group_peer: int | None = None) -> None:
        self.op, self.tensor, self.tag = op, tensor, tag
        self.group = _resolve(group)
        self.peer = _canonical(self.group, peer, group_peer, return_global=True)
        self.group_peer = _canonical(self.group, peer, group_peer)

    def __repr__(self) -> str:
        me = self.group.rank()
        s, d = (me, self.group_peer) if self.op is isend else (self.group_peer, me)
        return (f"P2POp({self.op.__name__} pg={self.group._name or 'default_pg'}, group_src={s}, "
                f"group_dst={d},  {tuple(self.tensor.shape)}, {self.tensor.dtype})")


def batch_isend_irecv(p2p_op_list: list[P2POp]) -> list[Work]:
    """Start every send and receive of ``p2p_op_list``; returns their `Work`s.

    The order of sends and receives in the list does not matter (all are non-blocking); several
    transfers between one pair of ranks in one direction match in list order.

    Raises:
        ValueError: An entry is not a `P2POp`, or the ops use different groups.

    Mirrors: ``torch.distributed.batch_isend_irecv``.
    """
    if not isinstance(p2p_op_list, list) or not all(isinstance(p, P2POp) for p in p2p_op_list):
        raise ValueError("Invalid ``p2p_op_list``. Each op is expected to to be of type "
                         "``torch.distributed.P2POp``.")
    group = p2p_op_list[0].group
    if not all(p.group is group for p in p2p_op_list):
        raise ValueError("All ops need to use the same group.")
    works = []
    for p in p2p_op_list:
        key = "group_dst" if p.op is isend else "group_src"
        work = p.op(p.tensor, group=p.group, tag=p.tag, **{key: p.group_peer})
        if work is not None:
            works.append(work)
    return works


def _tensor(arr: np.ndarray) -> Any:
    from hookgrad._tensor import Tensor

    return Tensor._make(arr)


def send_object_list(object_list: list[Any], dst: int | None = None,
                     group: ProcessGroup | None = None, device: Any = None,
                     group_dst: int | None = None, use_batch: bool = False) -> None:
    """Send the picklable objects of ``object_list`` to ``dst`` (their pickled sizes, then the
    bytes, as PyTorch does).

    Mirrors: ``torch.distributed.send_object_list``.
    """
    pg = _resolve(group)
    peer = _canonical(pg, dst, group_dst)
    _not_self(pg, peer, "destination")
    blobs = [pickle.dumps(obj) for obj in object_list]
    sizes = _tensor(np.array([len(b) for b in blobs], dtype=np.int64))
    data = _tensor(np.frombuffer(b"".join(blobs), dtype=np.uint8).copy())
    for t in (sizes, data):
        if use_batch:
            batch_isend_irecv([P2POp(isend, t, group=pg, group_peer=peer)]).pop().wait()
        else:
            send(t, group=pg, group_dst=peer)


def recv_object_list(object_list: list[Any], src: int | None = None,
                     group: ProcessGroup | None = None, device: Any = None,
                     group_src: int | None = None, use_batch: bool = False) -> int:
    """Fill ``object_list`` (as many entries as were sent) with the objects from ``src``;
    returns the sender's global rank.

    Mirrors: ``torch.distributed.recv_object_list``.
    """
    pg = _resolve(group)
    peer = _canonical(pg, src, group_src)
    _not_self(pg, peer, "source")
    sizes = _tensor(np.zeros(len(object_list), dtype=np.int64))

    def get(t: Any) -> int:
        if use_batch:
            batch_isend_irecv([P2POp(irecv, t, group=pg, group_peer=peer)]).pop().wait()
            return get_global_rank(pg, peer)
        return recv(t, group=pg, group_src=peer)

    rank_sizes = get(sizes)
    data = _tensor(np.zeros(int(sizes._data.sum()), dtype=np.uint8))
    rank_objects = get(data)
    if rank_sizes != rank_objects:
        raise AssertionError("Mismatch in return ranks for object sizes and objects.")
    raw, offset = data._data.tobytes(), 0
    for i, size in enumerate(sizes._data.tolist()):
        object_list[i] = pickle.loads(raw[offset:offset + size])
        offset += size
    return rank_objects
