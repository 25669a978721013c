"""Functional collectives: collectives that return a new tensor instead of writing in place.

Mirrors: ``torch.distributed._functional_collectives`` (``all_reduce``, ``all_gather_single``,
``reduce_scatter_single``, ``all_to_all_single``, ``broadcast``, their ``*_autograd`` and
deprecated ``*_tensor`` spellings, ``wait_tensor``). Tensor-parallel and expert-parallel code
(transformers' MoE layers) call them. Differences from PyTorch:

- hookgrad's collectives complete before they return, so the result is a plain tensor (never an
  ``AsyncCollectiveTensor``) and ``wait_tensor`` returns its argument: PyTorch's blocking
  semantics.
- `group` may be a ``ProcessGroup`` or the list of every rank of the default group; hookgrad has
  no group names, ``DeviceMesh`` or rank sub-lists to resolve (``NotImplementedError``).

Gradients follow PyTorch's rules: the backward of ``all_reduce``/``reduce_scatter`` exists only
for ``"sum"`` (``RuntimeError`` when it runs for another op), ``all_gather``'s is a summing
reduce-scatter, ``all_to_all_single``'s sends the gradient back with the split sizes swapped.
"""

from __future__ import annotations

import warnings
from typing import Any

from hookgrad import _functional as _F
from hookgrad._tensor import Tensor
from hookgrad.autograd.function import Function
from hookgrad.distributed import _composite, collectives
from hookgrad.distributed._names import ReduceOp
from hookgrad.distributed.process_group import ProcessGroup, _resolve

__all__ = ["wait_tensor", "all_reduce", "all_gather_single", "all_gather_single_autograd",
           "all_gather_tensor", "all_gather_tensor_autograd", "reduce_scatter_single",
           "reduce_scatter_single_autograd", "reduce_scatter_tensor",
           "reduce_scatter_tensor_autograd", "all_to_all_single", "all_to_all_single_autograd",
           "broadcast"]

_OPS = {"sum": ReduceOp.SUM, "avg": ReduceOp.AVG, "product": ReduceOp.PRODUCT,
        "min": ReduceOp.MIN, "max": ReduceOp.MAX}


def wait_tensor(tensor: Tensor) -> Tensor:
    """Wait on a collective's result (already complete in hookgrad) and return it.

    Example:
        >>> import hookgrad
        >>> t = hookgrad.ones(2)
        >>> wait_tensor(t) is t
        True

    Mirrors: ``torch.distributed._functional_collectives.wait_tensor``.
    """
    return tensor


def _group(group: Any) -> ProcessGroup:
    if isinstance(group, ProcessGroup):
        return group
    if isinstance(group, (list, tuple)) and all(isinstance(r, int) for r in group):
        world = _resolve(None)
        if list(group) == list(range(world.size())):
            return world
    raise NotImplementedError(f"hookgrad's functional collectives take a ProcessGroup or the "
                              f"list of all ranks as `group`, not {group!r}")


def _op(name: str) -> Any:
    try:
        return _OPS[name.lower()]
    except KeyError:
        raise ValueError(f"Unsupported reduce op {name!r} for functional collectives") from None


def _reduced(x: Tensor, op: str, pg: ProcessGroup) -> Tensor:
    out = x.detach().contiguous().clone()  # type: ignore[attr-defined]
    collectives.all_reduce(out, op=_op(op), group=pg)
    return out


def _gathered(x: Tensor, pg: ProcessGroup) -> Tensor:
    """Every rank's `x` stacked along dim 0 (``[size * d0, ...]``)."""
    src = x.detach().contiguous()  # type: ignore[attr-defined]
    out = _F.creation.empty(src.shape[0] * pg.size(), *src.shape[1:], dtype=src.dtype)
    _composite.all_gather_single(out, src, group=pg)
    return out


def _scattered(x: Tensor, op: str, pg: ProcessGroup) -> Tensor:
    """This rank's dim-0 block of the reduction of every rank's `x`."""
    src = x.detach().contiguous()  # type: ignore[attr-defined]
    if src.shape[0] % pg.size():
        raise AssertionError(f"input dimension 0 ({src.shape[0]} must be a multiple of "
                             f"group_size {pg.size()})")
    out = _F.creation.empty(src.shape[0] // pg.size(), *src.shape[1:], dtype=src.dtype)
    _composite.reduce_scatter_single(out, src, op=_op(op), group=pg)
    return out


def _exchanged(x: Tensor, out_splits: list[int], in_splits: list[int],
               pg: ProcessGroup) -> Tensor:
    src = x.detach().contiguous()  # type: ignore[attr-defined]
    out = _F.creation.empty(sum(out_splits), *src.shape[1:], dtype=src.dtype)
    _composite.all_to_all_single(out, src, out_splits, in_splits, group=pg)
    return out


def _sum_only(what: str, op: str) -> None:
    if op.lower() != "sum":
        raise RuntimeError(f"{what} backward only supports 'sum' reduction, got '{op}'")


class _AllReduce(Function):
    @staticmethod
    def forward(ctx: Any, x: Tensor, op: str, pg: ProcessGroup) -> Tensor:
        ctx.op, ctx.pg = op, pg
        return _reduced(x, op, pg)

    @staticmethod
    def backward(ctx: Any, grad: Tensor) -> tuple:
        _sum_only("all_reduce", ctx.op)
        return _reduced(grad, "sum", ctx.pg), None, None


class _AllGather(Function):
    @staticmethod
    def forward(ctx: Any, x: Tensor, pg: ProcessGroup) -> Tensor:
        ctx.pg = pg
        return _gathered(x, pg)

    @staticmethod
    def backward(ctx: Any, grad: Tensor) -> tuple:
        return _scattered(grad, "sum", ctx.pg), None


class _ReduceScatter(Function):
    @staticmethod
    def forward(ctx: Any, x: Tensor, op: str, pg: ProcessGroup) -> Tensor:
        ctx.op, ctx.pg = op, pg
        return _scattered(x, op, pg)

    @staticmethod
    def backward(ctx: Any, grad: Tensor) -> tuple:
        _sum_only("reduce_scatter_tensor", ctx.op)
        return _gathered(grad, ctx.pg), None, None


class _AllToAll(Function):
    @staticmethod
    def forward(ctx: Any, x: Tensor, out_splits: list[int], in_splits: list[int],
                pg: ProcessGroup) -> Tensor:
        ctx.splits, ctx.pg = (out_splits, in_splits), pg
        return _exchanged(x, out_splits, in_splits, pg)

    @staticmethod
    def backward(ctx: Any, grad: Tensor) -> tuple:
        out_splits, in_splits = ctx.splits
        return _exchanged(grad, in_splits, out_splits, ctx.pg), None, None, None


def all_reduce(self: Tensor, reduceOp: str, group: Any, tag: str = "") -> Tensor:  # noqa: N803
    """Every rank's `self` reduced with `reduceOp` (``"sum"``, ``"avg"``, ``"product"``,
    ``"min"``, ``"max"``). Mirrors: ``torch.distributed._functional_collectives.all_reduce``."""
    return _AllReduce.apply(self, reduceOp, _group(group))


def _chunks_to_dim(gathered: Tensor, size: int, dim: int) -> Tensor:
    """Move the rank blocks of a dim-0 gather to `dim` (hookgrad ops: their grads flow)."""
    if dim == 0:
        return gathered
    return _F.shape.cat(_F.shape.chunk(gathered, size, 0), dim)


def all_gather_single(self: Tensor, gather_dim: int, group: Any, tag: str = "") -> Tensor:
    """Every rank's `self` concatenated along `gather_dim`, differentiable.

    Mirrors: ``torch.distributed._functional_collectives.all_gather_single``.
    """
    pg = _group(group)
    return _chunks_to_dim(_AllGather.apply(self, pg), pg.size(), gather_dim)


all_gather_single_autograd = all_gather_single


def _deprecated(old: str, new: str) -> None:
    warnings.warn(f"`torch.distributed._functional_collectives.{old}` is deprecated. "
                  f"Please use `torch.distributed._functional_collectives.{new}` instead.",
                  FutureWarning, stacklevel=3)


def all_gather_tensor(self: Tensor, gather_dim: int, group: Any, tag: str = "") -> Tensor:
    """Deprecated spelling of `all_gather_single` (FutureWarning, as PyTorch)."""
    _deprecated("all_gather_tensor", "all_gather_single")
    return all_gather_single(self, gather_dim, group, tag)


def all_gather_tensor_autograd(self: Tensor, gather_dim: int, group: Any,
                               tag: str = "") -> Tensor:
    """Deprecated spelling of `all_gather_single_autograd` (FutureWarning, as PyTorch)."""
    _deprecated("all_gather_tensor_autograd", "all_gather_single_autograd")
    return all_gather_single(self, gather_dim, group, tag)


def reduce_scatter_single(self: Tensor, reduceOp: str, scatter_dim: int, group: Any,  # noqa: N803
                          tag: str = "") -> Tensor:
    """This rank's block (along `scatter_dim`) of every rank's `self` reduced.

    Mirrors: ``torch.distributed._functional_collectives.reduce_scatter_single``.
    """
    pg = _group(group)
    if self.size(scatter_dim) % pg.size():
        raise AssertionError(f"input dimension 0 ({self.size(0)} must be a multiple of "
                             f"group_size {pg.size()})")
    if scatter_dim != 0:
        self = _F.shape.cat(_F.shape.chunk(self, pg.size(), scatter_dim), 0)
    return _ReduceScatter.apply(self, reduceOp, pg)


reduce_scatter_single_autograd = reduce_scatter_single


def reduce_scatter_tensor(self: Tensor, reduceOp: str, scatter_dim: int, group: Any,  # noqa: N803
                          tag: str = "") -> Tensor:
    """Deprecated spelling of `reduce_scatter_single` (FutureWarning, as PyTorch)."""
    _deprecated("reduce_scatter_tensor", "reduce_scatter_single")
    return reduce_scatter_single(self, reduceOp, scatter_dim, group, tag)


def reduce_scatter_tensor_autograd(self: Tensor, reduceOp: str, scatter_dim: int,  # noqa: N803
                                   group: Any, tag: str = "") -> Tensor:
    """Deprecated spelling of `reduce_scatter_single_autograd` (FutureWarning, as PyTorch)."""
    _deprecated("reduce_scatter_tensor_autograd", "reduce_scatter_single_autograd")
    return reduce_scatter_single(self, reduceOp, scatter_dim, group, tag)


def all_to_all_single(self: Tensor, output_split_sizes: list[int] | None,
                      input_split_sizes: list[int] | None, group: Any,
                      tag: str = "") -> Tensor:
    """Dim-0 blocks of `self` sent rank to rank (even blocks when both split lists are None).

    Mirrors: ``torch.distributed._functional_collectives.all_to_all_single``.
    """
    for name, sizes in (("output", output_split_sizes), ("input", input_split_sizes)):
        if sizes is not None and not all(isinstance(s, int) for s in sizes):
            raise AssertionError(f"All {name}_split_sizes must be int or SymInt, got {sizes}")
    pg = _group(group)
    if output_split_sizes is None or input_split_sizes is None:
        if not (output_split_sizes is None and input_split_sizes is None):
            raise AssertionError("output_split_sizes and input_split_sizes must either be "
                                 "specified together or both set to None")
        output_split_sizes = input_split_sizes = [self.shape[0] // pg.size()] * pg.size()
    return _AllToAll.apply(self, list(output_split_sizes), list(input_split_sizes), pg)


all_to_all_single_autograd = all_to_all_single


def broadcast(self: Tensor, src: int, group: Any, tag: str = "") -> Tensor:
    """Rank `src`'s `self` on every rank (not differentiable, as PyTorch's).

    Mirrors: ``torch.distributed._functional_collectives.broadcast``.
    """
    pg = _group(group)
    out = self.detach().contiguous().clone()  # type: ignore[attr-defined]
    collectives.broadcast(out, src, group=pg)
    return out
