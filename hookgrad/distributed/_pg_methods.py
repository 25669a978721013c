"""The c10d-style methods of `ProcessGroup` that comm hooks call (``pg.allreduce([t])``...).

They take lists of tensors (one per device: hookgrad's CPU groups take exactly one) and an
options record or the short positional forms, and always return a `Work` whose
``get_future()`` resolves to the output tensors. They are installed on `ProcessGroup` from
this one table (as ``_tensor_methods`` installs Tensor methods) because they sit on top of the
collectives, which themselves need `ProcessGroup`.
"""

from __future__ import annotations

from typing import Any

from hookgrad.distributed import _composite as composite
from hookgrad.distributed import _p2p as p2p
from hookgrad.distributed import collectives as c
from hookgrad.distributed._names import ReduceOp
from hookgrad.distributed._work import Work
from hookgrad.distributed.process_group import ProcessGroup


def _one(tensors: Any, what: str) -> Any:
    """The single tensor of a per-device list (a bare tensor is accepted too)."""
    if not isinstance(tensors, (list, tuple)):
        return tensors
    if len(tensors) != 1:
        raise ValueError(f"ProcessGroup.{what}: hookgrad's CPU groups take exactly one tensor "
                         f"per call, got {len(tensors)}")
    return tensors[0]


def _op(opts: Any) -> Any:
    if opts is None:
        return ReduceOp.SUM
    if isinstance(opts, (int, ReduceOp)):
        return opts
    return getattr(opts, "reduceOp", ReduceOp.SUM)


def _work(result: Work | None) -> Work:
    assert result is not None  # every call below passes async_op=True
    return result


def allreduce(self: ProcessGroup, tensors: Any, opts: Any = None) -> Work:
    """``allreduce([tensor], AllreduceOptions | ReduceOp)`` → `Work`.

    Mirrors: ``torch.distributed.ProcessGroup.allreduce``.
    """
    return _work(c.all_reduce(_one(tensors, "allreduce"), _op(opts), group=self, async_op=True))


def broadcast(self: ProcessGroup, tensors: Any, opts: Any = 0) -> Work:
    """``broadcast([tensor], BroadcastOptions | root)``; the root is a group rank.

    Mirrors: ``torch.distributed.ProcessGroup.broadcast``.
    """
    root = opts if isinstance(opts, int) else getattr(opts, "rootRank", 0)
    src = self._global_ranks()[root]
    return _work(c.broadcast(_one(tensors, "broadcast"), src, group=self, async_op=True))


def allgather(self: ProcessGroup, output_tensors: Any, input_tensors: Any,
              opts: Any = None) -> Work:
    """``allgather([[out_0, ..., out_{n-1}]], [tensor])``.

    Mirrors: ``torch.distributed.ProcessGroup.allgather``.
    """
    outs = output_tensors[0] if output_tensors and isinstance(output_tensors[0], (list, tuple)) \
        else output_tensors
    return _work(c.all_gather(list(outs), _one(input_tensors, "allgather"), group=self,
                              async_op=True))


def reduce_scatter(self: ProcessGroup, output_tensors: Any, input_tensors: Any,
                   opts: Any = None) -> Work:
    """``reduce_scatter([out], [[in_0, ..., in_{n-1}]], ReduceScatterOptions)``.

    Mirrors: ``torch.distributed.ProcessGroup.reduce_scatter``.
    """
    ins = input_tensors[0] if input_tensors and isinstance(input_tensors[0], (list, tuple)) \
        else input_tensors
    return _work(composite.reduce_scatter(_one(output_tensors, "reduce_scatter"), list(ins),
                                          _op(opts), group=self, async_op=True))


def _reduce_scatter_base(self: ProcessGroup, output: Any, input: Any,  # noqa: A002
                         opts: Any = None) -> Work:
    """Mirrors: ``torch.distributed.ProcessGroup._reduce_scatter_base``."""
    return _work(composite.reduce_scatter_single(output, input, _op(opts), group=self,
                                                 async_op=True))


def _allgather_base(self: ProcessGroup, output: Any, input: Any,  # noqa: A002
                    opts: Any = None) -> Work:
    """Mirrors: ``torch.distributed.ProcessGroup._allgather_base``."""
    return _work(composite.all_gather_single(output, input, group=self, async_op=True))


def reduce(self: ProcessGroup, tensors: Any, opts: Any = None) -> Work:
    """``reduce([tensor], ReduceOptions)``: the result lands on ``opts.rootRank`` only.

    Mirrors: ``torch.distributed.ProcessGroup.reduce``.
    """
    root = getattr(opts, "rootRank", 0)
    return _work(c.reduce(_one(tensors, "reduce"), self._global_ranks()[root], _op(opts),
                          group=self, async_op=True))


def barrier(self: ProcessGroup, opts: Any = None) -> Work:
    """Mirrors: ``torch.distributed.ProcessGroup.barrier``."""
    return _work(c.barrier(group=self, async_op=True))


def send(self: ProcessGroup, tensors: Any, dstRank: int, tag: int) -> Work:  # noqa: N803
    """Send to group rank ``dstRank``. Mirrors: ``torch.distributed.ProcessGroup.send``."""
    return _work(p2p.isend(_one(tensors, "send"), group=self, tag=tag, group_dst=dstRank))


def recv(self: ProcessGroup, tensors: Any, srcRank: int, tag: int) -> Work:  # noqa: N803
    """Receive from group rank ``srcRank``. Mirrors: ``torch.distributed.ProcessGroup.recv``."""
    return _work(p2p.irecv(_one(tensors, "recv"), group=self, tag=tag, group_src=srcRank))


def recv_anysource(self: ProcessGroup, tensors: Any, tag: int) -> Work:
    """Receive from any rank (``work._source_rank()`` names it).

    Mirrors: ``torch.distributed.ProcessGroup.recv_anysource``.
    """
    return _work(p2p.irecv(_one(tensors, "recv_anysource"), group=self, tag=tag))


def group_name(self: ProcessGroup) -> str:
    """Mirrors: ``torch.distributed.ProcessGroup.group_name``."""
    return self._name or f"hookgrad_{self._engine}_{'_'.join(map(str, self._global_ranks()))}"


METHODS = {"allreduce": allreduce, "broadcast": broadcast, "allgather": allgather,
           "reduce_scatter": reduce_scatter, "_reduce_scatter_base": _reduce_scatter_base,
           "_allgather_base": _allgather_base, "reduce": reduce, "barrier": barrier,
           "send": send, "recv": recv, "recv_anysource": recv_anysource}


def install() -> None:
    """Attach the methods to `ProcessGroup` (once, from ``hookgrad.distributed``)."""
    for name, fn in METHODS.items():
        setattr(ProcessGroup, name, fn)
    ProcessGroup.group_name = property(group_name)  # type: ignore[attr-defined]
