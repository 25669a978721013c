"""Collectives that autograd differentiates: `all_reduce`, `broadcast`, `all_gather`.

Mirrors: ``torch.distributed.nn.functional`` (vector-quantize-pytorch sums codebook statistics
with ``dist_nn.all_reduce``). Each returns new tensors (the input is not written) and warns
``FutureWarning`` as PyTorch, which points to ``_functional_collectives``. Gradients, as
PyTorch's: all_reduce's is the all_reduce of the output gradients; broadcast's is their sum on
the source rank and zero elsewhere; all_gather's for this rank is the sum over ranks of the
gradient each received for this rank's piece. The other collectives of PyTorch's module
(gather, scatter, reduce, reduce_scatter, all_to_all) are not provided.
"""

from __future__ import annotations

import warnings
from typing import Any

import hookgrad.distributed as dist
from hookgrad._functional.shape import stack
from hookgrad.autograd.function import Function
from hookgrad.distributed import ReduceOp, group

__all__ = ["all_gather", "all_reduce", "broadcast"]


def _deprecated(name: str, suggestion: str) -> None:
    warnings.warn(f"torch.distributed.nn.functional.{name} is deprecated, use {suggestion} "
                  "instead.", category=FutureWarning, stacklevel=3)


class _AllReduce(Function):
    @staticmethod
    def forward(ctx: Any, op: Any, grp: Any, tensor: Any) -> Any:
        ctx.group, ctx.op = grp, op
        out = tensor.clone()
        dist.all_reduce(out, op=op, group=grp)
        return out

    @staticmethod
    def backward(ctx: Any, grad: Any) -> Any:
        return None, None, _AllReduce.apply(ctx.op, ctx.group, grad)


class _Broadcast(Function):
    @staticmethod
    def forward(ctx: Any, src: int, grp: Any, tensor: Any) -> Any:
        ctx.src, ctx.group, ctx.rank = src, grp, dist.get_rank(group=grp)
        out = tensor.clone()
        dist.broadcast(out, src, group=grp)
        return out

    @staticmethod
    def backward(ctx: Any, grad: Any) -> Any:
        gx = _AllReduce.apply(ReduceOp.SUM, ctx.group, grad)
        return None, None, gx if ctx.src == ctx.rank else gx * 0


class _AllGather(Function):
    @staticmethod
    def forward(ctx: Any, grp: Any, tensor: Any) -> Any:
        ctx.group = grp
        tensor = tensor.contiguous()
        outs = [tensor.new_empty(tensor.shape) for _ in range(dist.get_world_size(group=grp))]
        dist.all_gather(outs, tensor, group=grp)
        return tuple(outs)

    @staticmethod
    def backward(ctx: Any, *grads: Any) -> Any:
        summed = _AllReduce.apply(ReduceOp.SUM, ctx.group, stack(list(grads)))
        return None, summed[dist.get_rank(group=ctx.group)]


def all_reduce(tensor: Any, op: Any = ReduceOp.SUM, group: Any = group.WORLD) -> Any:
    """Mirrors: ``torch.distributed.nn.functional.all_reduce``."""
    _deprecated("all_reduce", "torch.distributed._functional_collectives.all_reduce")
    return _AllReduce.apply(op, group, tensor)


def broadcast(tensor: Any, src: int, group: Any = group.WORLD) -> Any:
    """Mirrors: ``torch.distributed.nn.functional.broadcast``."""
    _deprecated("broadcast", "torch.distributed._functional_collectives.broadcast")
    return _Broadcast.apply(src, group, tensor)


def all_gather(tensor: Any, group: Any = group.WORLD) -> tuple:
    """Mirrors: ``torch.distributed.nn.functional.all_gather``."""
    _deprecated("all_gather", "torch.distributed._functional_collectives.all_gather_single")
    return _AllGather.apply(group, tensor)
