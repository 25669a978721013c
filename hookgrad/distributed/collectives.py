"""Collectives on hookgrad tensors (in place on the arrays behind them).

Every call returns ``None`` with ``async_op=False`` (after waiting), or a `Work` otherwise.
"""

from __future__ import annotations

import pickle
from typing import Any

import numpy as np

from hookgrad.distributed._names import ReduceOp, _DeprecatedReduceOp
from hookgrad.distributed._protocol import Descriptor
from hookgrad.distributed._work import Work
from hookgrad.distributed.process_group import ProcessGroup, _resolve

_TORCH_INT_NAMES = {"int64": "Long", "int32": "Int", "int16": "Short", "int8": "Char",
                    "uint8": "Byte", "bool": "Bool"}


reduce_op = _DeprecatedReduceOp()
_BITWISE = (ReduceOp.BAND, ReduceOp.BOR, ReduceOp.BXOR)


def _array(tensor: Any) -> np.ndarray:
    arr = getattr(tensor, "_data", None)
    if not isinstance(arr, np.ndarray):
        raise TypeError(f"expected a hookgrad Tensor on the CPU, got {type(tensor).__name__}")
    return arr


def _run(group: ProcessGroup, desc: Descriptor, payload: Any, outputs: list[Any],
         finish: Any, async_op: bool) -> Work | None:
    work = Work(group, group._comm.start(desc, payload), outputs, finish)
    if async_op:
        return work
    work.wait()
    return None


def _bump(tensor: Any) -> None:
    tensor._vc().value += 1


def all_reduce(tensor: Any, op: Any = ReduceOp.SUM, group: ProcessGroup | None = None,
               async_op: bool = False) -> Work | None:
    """Reduce ``tensor`` across ranks, in place; every rank gets the result.

    ``AVG`` is a sum followed by true division; on an integer tensor it raises
    ``RuntimeError`` like PyTorch.

    Mirrors: ``torch.distributed.all_reduce``.
    """
    pg = _resolve(group)
    arr = _array(tensor)
    code = int(op)
    if code == ReduceOp.PREMUL_SUM:
        raise RuntimeError("Cannot use ReduceOp.PREMUL_SUM with the CPU engines (mpi, threads)")
    if code in _BITWISE and arr.dtype.kind not in "iub":
        raise RuntimeError(f"Cannot use ReduceOp.{ReduceOp.RedOpType(code).name} with "
                           f"floating-point tensors ({arr.dtype.name})")
    if code == ReduceOp.AVG and arr.dtype.kind in "iub":
        raise RuntimeError("result type Float can't be cast to the desired output type "
                           f"{_TORCH_INT_NAMES.get(arr.dtype.name, arr.dtype.name)}")
    buf = arr if arr.flags.c_contiguous else np.ascontiguousarray(arr)
    world = pg.size()

    def finish(_: Any) -> None:
        if code == ReduceOp.AVG:
            np.true_divide(buf, world, out=buf)
        if buf is not arr:
            arr[...] = buf
        _bump(tensor)

    desc = Descriptor("all_reduce", arr.dtype.name, tuple(arr.shape), code)
    return _run(pg, desc, buf, [tensor], finish, async_op)


def broadcast(tensor: Any, src: int, group: ProcessGroup | None = None,
              async_op: bool = False) -> Work | None:
    """Copy ``tensor`` of rank ``src`` into ``tensor`` on every rank.

    Mirrors: ``torch.distributed.broadcast``.
    """
    pg = _resolve(group)
    arr = _array(tensor)
    root = _group_rank(pg, src)
    buf = arr if arr.flags.c_contiguous else np.ascontiguousarray(arr)

    def finish(_: Any) -> None:
        if buf is not arr:
            arr[...] = buf
        _bump(tensor)

    desc = Descriptor("broadcast", arr.dtype.name, tuple(arr.shape), root)
    return _run(pg, desc, buf, [tensor], finish, async_op)


def _group_rank(pg: ProcessGroup, global_rank: int) -> int:
    ranks = pg._global_ranks()
    if global_rank not in ranks:
        raise ValueError(f"Global rank {global_rank} is not part of group {pg}")
    return ranks.index(global_rank)


def all_gather(tensor_list: list[Any], tensor: Any, group: ProcessGroup | None = None,
               async_op: bool = False) -> Work | None:
    """Gather ``tensor`` from every rank into ``tensor_list`` (one entry per rank).

    Mirrors: ``torch.distributed.all_gather``.
    """
    pg = _resolve(group)
    if len(tensor_list) != pg.size():
        raise ValueError(f"all_gather: tensor_list has {len(tensor_list)} entries, expected "
                         f"{pg.size()} (the group size)")
    arr = np.ascontiguousarray(_array(tensor))

    def finish(parts: list[np.ndarray]) -> None:
        for out, part in zip(tensor_list, parts, strict=True):
            _array(out)[...] = part.reshape(_array(out).shape)
            _bump(out)

    desc = Descriptor("all_gather", arr.dtype.name, tuple(arr.shape))
    return _run(pg, desc, arr, list(tensor_list), finish, async_op)


def all_gather_object(object_list: list[Any], obj: Any,
                      group: ProcessGroup | None = None) -> None:
    """Gather a picklable object from every rank into ``object_list``.

    Mirrors: ``torch.distributed.all_gather_object``.
    """
    pg = _resolve(group)
    if len(object_list) != pg.size():
        raise ValueError(f"all_gather_object: object_list has {len(object_list)} entries, "
                         f"expected {pg.size()}")
    data = pickle.dumps(obj)

    def finish(parts: list[bytes]) -> None:
        for i, part in enumerate(parts):
            object_list[i] = pickle.loads(part)

    _run(pg, Descriptor("all_gather_object", nbytes=len(data)), data, [], finish, False)


def broadcast_object_list(object_list: list[Any], src: int = 0,
                          group: ProcessGroup | None = None, device: Any = None) -> None:
    """Replace ``object_list``'s contents on every rank with those of rank ``src``.

    Mirrors: ``torch.distributed.broadcast_object_list``.
    """
    pg = _resolve(group)
    root = _group_rank(pg, src)
    data = pickle.dumps(list(object_list)) if pg.rank() == root else b""

    def finish(blob: bytes) -> None:
        object_list[:] = pickle.loads(blob)

    desc = Descriptor("broadcast_object", arg=root, nbytes=len(data))
    _run(pg, desc, data, [], finish, False)


def barrier(group: ProcessGroup | None = None, async_op: bool = False,
            device_ids: Any = None) -> Work | None:
    """Block until every rank of the group reached the barrier.

    Mirrors: ``torch.distributed.barrier``.
    """
    return _run(_resolve(group), Descriptor("barrier"), None, [], None, async_op)


def reduce(tensor: Any, dst: int, op: Any = ReduceOp.SUM, group: ProcessGroup | None = None,
           async_op: bool = False) -> Work | None:
    """Reduce into ``tensor`` of rank ``dst`` only (others keep their input).

    Mirrors: ``torch.distributed.reduce``.
    """
    pg = _resolve(group)
    root = _group_rank(pg, dst)
    arr = _array(tensor)
    tmp = type(tensor)._make(arr.copy())
    work = all_reduce(tmp, op, group, async_op=True)
    assert work is not None

    def keep(_: Any) -> list[Any]:
        if pg.rank() == root:
            arr[...] = tmp._data
            _bump(tensor)
        return [tensor]

    fut = work.get_future().then(keep)
    if async_op:
        return _ChainedWork(pg, work, fut, [tensor])
    fut.wait()
    return None


class _ChainedWork(Work):
    """A Work whose completion includes a post-processing future (``reduce``)."""

    def __init__(self, group: ProcessGroup, inner: Work, fut: Any, outputs: list[Any]) -> None:
        super().__init__(group, None, outputs)  # completes a placeholder future at once
        self._future = fut  # the real one: done once ``keep`` ran
        self._inner = inner
        self._completed = False

    def wait(self, timeout: Any = None) -> bool:
        self._inner.wait(timeout)
        self._future.wait()
        self._completed = True
        return True
