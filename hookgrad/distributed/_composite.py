"""Collectives composed of the engine's primitive ones (all_gather, broadcast, all_reduce).

They move more bytes than a dedicated engine call would (a gather is an all-gather whose
non-destination ranks drop the result), which is fine for the small tensors and 2-8 ranks
hookgrad's CPU engines serve. ``async_op=True`` returns an already completed `Work`: the
composite runs to completion before returning.
"""

from __future__ import annotations

import pickle
import warnings
from datetime import timedelta
from typing import Any

import numpy as np

from hookgrad.distributed._work import Work
from hookgrad.distributed.collectives import ReduceOp, _array, _bump, _group_rank, \
    all_gather, all_gather_object, all_reduce, barrier, broadcast
from hookgrad.distributed.process_group import ProcessGroup, _resolve


def _done(pg: ProcessGroup, outputs: list[Any], async_op: bool) -> Work | None:
    return Work(pg, None, outputs) if async_op else None


def _root(pg: ProcessGroup, root: int | None, group_root: int | None) -> int:
    """The group rank of a root given as a global rank (``dst``/``src``) or a group rank."""
    if root is not None and group_root is not None:
        raise ValueError("Can not specify both dst/src and group_dst/group_src")
    if group_root is not None:
        return group_root
    return _group_rank(pg, 0 if root is None else root)


def _write(out: Any, value: np.ndarray) -> None:
    _array(out)[...] = value.reshape(_array(out).shape)
    _bump(out)


def gather(tensor: Any, gather_list: list[Any] | None = None, dst: int | None = None,
           group: ProcessGroup | None = None, async_op: bool = False,
           group_dst: int | None = None) -> Work | None:
    """Collect ``tensor`` of every rank into ``gather_list`` on rank ``dst`` (default 0).

    Raises:
        ValueError: ``gather_list`` missing or of the wrong length on the destination, or given
            on another rank.

    Mirrors: ``torch.distributed.gather``.
    """
    pg = _resolve(group)
    root = _root(pg, dst, group_dst)
    if pg.rank() == root:
        if not gather_list or len(gather_list) != pg.size():
            raise ValueError("Argument ``gather_list`` must be specified on destination rank "
                             f"with {pg.size()} tensors.")
    elif gather_list:
        raise ValueError("Argument ``gather_list`` must NOT be specified on non-destination "
                         "ranks.")
    parts = [type(tensor)._make(np.empty_like(_array(tensor))) for _ in range(pg.size())]
    all_gather(parts, tensor, group=pg)
    if pg.rank() == root:
        for out, part in zip(gather_list or [], parts, strict=True):
            _write(out, part._data)
    return _done(pg, list(gather_list or []), async_op)


def scatter(tensor: Any, scatter_list: list[Any] | None = None, src: int | None = None,
            group: ProcessGroup | None = None, async_op: bool = False,
            group_src: int | None = None) -> Work | None:
    """Give rank ``i`` the ``i``-th tensor of ``scatter_list`` on rank ``src`` (default 0).

    Raises:
        ValueError: ``scatter_list`` missing or of the wrong length on the source, or given
            on another rank.

    Mirrors: ``torch.distributed.scatter``.
    """
    pg = _resolve(group)
    root = _root(pg, src, group_src)
    arr = _array(tensor)
    if pg.rank() == root:
        if not scatter_list or len(scatter_list) != pg.size():
            raise ValueError("Argument ``scatter_list`` must be specified on source rank "
                             f"with {pg.size()} tensors.")
        stacked = np.stack([_array(t).astype(arr.dtype, copy=False) for t in scatter_list])
    elif scatter_list:
        raise ValueError("Argument ``scatter_list`` must NOT be specified on non-source ranks.")
    else:
        stacked = np.empty((pg.size(), *arr.shape), dtype=arr.dtype)
    holder = type(tensor)._make(stacked)
    broadcast(holder, pg._global_ranks()[root], group=pg)
    _write(tensor, holder._data[pg.rank()])
    return _done(pg, [tensor], async_op)


def gather_object(obj: Any, object_gather_list: list[Any] | None = None, dst: int | None = None,
                  group: ProcessGroup | None = None, group_dst: int | None = None) -> None:
    """Collect a picklable object of every rank into ``object_gather_list`` on ``dst``.

    Mirrors: ``torch.distributed.gather_object``.
    """
    pg = _resolve(group)
    root = _root(pg, dst, group_dst)
    objs: list[Any] = [None] * pg.size()
    all_gather_object(objs, obj, group=pg)
    if pg.rank() == root:
        if object_gather_list is None or len(object_gather_list) != pg.size():
            raise ValueError("Argument ``object_gather_list`` must be specified on destination "
                             f"rank with {pg.size()} entries.")
        object_gather_list[:] = objs


def scatter_object_list(scatter_object_output_list: list[Any],
                        scatter_object_input_list: list[Any] | None = None,
                        src: int | None = None, group: ProcessGroup | None = None,
                        group_src: int | None = None) -> None:
    """Put entry ``i`` of ``src``'s input list into ``scatter_object_output_list[0]`` of rank i.

    Raises:
        ValueError: ``scatter_object_output_list`` is not a non-empty list.

    Mirrors: ``torch.distributed.scatter_object_list``.
    """
    if not isinstance(scatter_object_output_list, list) or not scatter_object_output_list:
        raise ValueError("Expected argument scatter_object_output_list to be a list of size at "
                         "least 1.")
    pg = _resolve(group)
    root = _root(pg, src, group_src)
    from hookgrad.distributed.collectives import broadcast_object_list

    items = list(scatter_object_input_list or []) if pg.rank() == root else []
    broadcast_object_list(items, src=pg._global_ranks()[root], group=pg)
    scatter_object_output_list[0] = pickle.loads(pickle.dumps(items[pg.rank()]))


def all_gather_single(output_tensor: Any, input_tensor: Any, group: ProcessGroup | None = None,
                      async_op: bool = False) -> Work | None:
    """Gather every rank's ``input_tensor`` into ``output_tensor``, concatenated along dim 0.

    Raises:
        ValueError: ``output_tensor`` does not hold ``world_size`` inputs.
        RuntimeError: Its shape is not ``[world_size * d0, ...]`` (gloo's rule: a stacked
            ``[world_size, *shape]`` output works with NCCL only).

    Mirrors: ``torch.distributed.all_gather_single`` (PyTorch 2.13's name of
    ``all_gather_into_tensor``).
    """
    pg = _resolve(group)
    src = _array(input_tensor)
    if _array(output_tensor).size != src.size * pg.size():
        raise ValueError("output tensor size must be equal to world_size times input size")
    out_shape = _array(output_tensor).shape
    if src.ndim and (out_shape[0] % pg.size() or
                     (out_shape[0] // pg.size(), *out_shape[1:]) != src.shape):
        # gloo's rule: the output is world_size inputs concatenated along dim 0 (a stacked
        # [world_size, *shape] output is NCCL-only)
        chunk = (out_shape[0] // pg.size(), *out_shape[1:])
        raise RuntimeError(f"ProcessGroupGloo::allgather: invalid tensor size at index 0 "
                           f"(expected ({', '.join(map(str, src.shape))}), got "
                           f"({', '.join(map(str, chunk))}))")
    parts = [type(input_tensor)._make(np.empty_like(src)) for _ in range(pg.size())]
    all_gather(parts, input_tensor, group=pg)
    _write(output_tensor, np.stack([p._data for p in parts]))
    return _done(pg, [output_tensor], async_op)


def reduce_scatter_single(output: Any, input: Any, op: Any = ReduceOp.SUM,  # noqa: A002
                          group: ProcessGroup | None = None,
                          async_op: bool = False) -> Work | None:
    """Reduce ``input`` across ranks and give rank ``i`` its ``i``-th equal chunk.

    Raises:
        ValueError: ``input`` does not hold ``world_size`` outputs.

    Mirrors: ``torch.distributed.reduce_scatter_single`` (PyTorch 2.13's name of
    ``reduce_scatter_tensor``).
    """
    pg = _resolve(group)
    out = _array(output)
    if _array(input).size != out.size * pg.size():
        raise ValueError("input tensor must be the same size as output size times world size")
    total = type(input)._make(np.ascontiguousarray(_array(input)).copy())
    all_reduce(total, op, group=pg)
    flat = total._data.reshape(pg.size(), -1)
    _write(output, flat[pg.rank()])
    return _done(pg, [output], async_op)


def _deprecated(old: str, new: str) -> None:
    warnings.warn(f"`torch.distributed.{old}` is deprecated. Please use "
                  f"`torch.distributed.{new}` instead.", FutureWarning, stacklevel=3)


def all_gather_into_tensor(output_tensor: Any, input_tensor: Any,
                           group: ProcessGroup | None = None,
                           async_op: bool = False) -> Work | None:
    """`all_gather_single` under its old name, with PyTorch 2.13's ``FutureWarning``.

    Mirrors: ``torch.distributed.all_gather_into_tensor``.
    """
    _deprecated("all_gather_into_tensor", "all_gather_single")
    return all_gather_single(output_tensor, input_tensor, group, async_op)


def reduce_scatter_tensor(output: Any, input: Any, op: Any = ReduceOp.SUM,  # noqa: A002
                          group: ProcessGroup | None = None,
                          async_op: bool = False) -> Work | None:
    """`reduce_scatter_single` under its old name, with PyTorch 2.13's ``FutureWarning``.

    Mirrors: ``torch.distributed.reduce_scatter_tensor``.
    """
    _deprecated("reduce_scatter_tensor", "reduce_scatter_single")
    return reduce_scatter_single(output, input, op, group, async_op)


def all_gather_coalesced(output_tensor_lists: list[list[Any]], input_tensor_list: list[Any],
                         group: ProcessGroup | None = None, async_op: bool = False) -> Any:
    """``output_tensor_lists[r][i]`` receives rank ``r``'s ``input_tensor_list[i]``; warns
    as PyTorch 2.13 does (``FutureWarning``). With ``async_op=True`` returns a completed
    `Future` (PyTorch returns the work's future here, not the work).

    Raises:
        TypeError: ``output_tensor_lists`` is not a list.
        ValueError: ``output_tensor_lists`` does not hold one list per rank.

    Mirrors: ``torch.distributed.all_gather_coalesced``.
    """
    warnings.warn("`torch.distributed.all_gather_coalesced` will be deprecated. If you must "
                  "use it, please revisit our documentation later at "
                  "https://pytorch.org/docs/main/distributed.html#collective-functions",
                  FutureWarning, stacklevel=2)
    pg = _resolve(group)
    if not isinstance(output_tensor_lists, list):
        raise TypeError("Invalid function argument: output_tensor_lists should be a list")
    if len(output_tensor_lists) != pg.size():
        raise ValueError(f"all_gather_coalesced: output_tensor_lists has "
                         f"{len(output_tensor_lists)} lists, expected {pg.size()}")
    for i, tensor in enumerate(input_tensor_list):
        outs = [lst[i] for lst in output_tensor_lists]
        all_gather(outs, tensor, group=pg)
    if not async_op:
        return None
    from hookgrad.futures import Future

    fut: Future[Any] = Future()
    fut.set_result(output_tensor_lists)
    return fut


def reduce_scatter(output: Any, input_list: list[Any], op: Any = ReduceOp.SUM,
                   group: ProcessGroup | None = None, async_op: bool = False) -> Work | None:
    """Reduce entry ``i`` of every rank's ``input_list`` into ``output`` of rank ``i``.

    Raises:
        ValueError: ``input_list`` does not hold one tensor per rank.

    Mirrors: ``torch.distributed.reduce_scatter``.
    """
    pg = _resolve(group)
    if len(input_list) != pg.size():
        raise ValueError(f"reduce_scatter: input_list has {len(input_list)} tensors, expected "
                         f"{pg.size()} (the group size)")
    stacked = np.stack([_array(t) for t in input_list])
    total = type(output)._make(stacked)
    all_reduce(total, op, group=pg)
    _write(output, total._data[pg.rank()])
    return _done(pg, [output], async_op)


def all_to_all_single(output: Any, input: Any,  # noqa: A002 - torch's parameter name
                      output_split_sizes: list[int] | None = None,
                      input_split_sizes: list[int] | None = None,
                      group: ProcessGroup | None = None, async_op: bool = False) -> Work | None:
    """Split ``input`` along dim 0, send piece ``i`` to rank ``i``, concatenate what arrives.

    Mirrors: ``torch.distributed.all_to_all_single``.
    """
    pg = _resolve(group)
    n, src = pg.size(), _array(input)
    sizes = list(input_split_sizes) if input_split_sizes else [len(src) // n] * n
    if sum(sizes) != len(src) or len(sizes) != n:
        raise ValueError(f"Split sizes {sizes} don't cover the {len(src)} rows of the input")
    offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(int)
    pieces = [src[offsets[i]:offsets[i + 1]] for i in range(n)]
    everyone: list[Any] = [None] * n
    all_gather_object(everyone, pieces, group=pg)
    received = np.concatenate([everyone[q][pg.rank()] for q in range(n)])
    if output_split_sizes and list(output_split_sizes) != [len(e[pg.rank()]) for e in everyone]:
        raise ValueError(f"output_split_sizes {list(output_split_sizes)} differ from what the "
                         "ranks sent")
    _write(output, received)
    return _done(pg, [output], async_op)


def monitored_barrier(group: ProcessGroup | None = None, timeout: timedelta | None = None,
                      wait_all_ranks: bool = False) -> None:
    """A barrier that fails within ``timeout`` naming the ranks that did not arrive.

    Raises:
        DistBackendError: A rank did not reach the barrier in time (its rank is named).

    Mirrors: ``torch.distributed.monitored_barrier``.
    """
    pg = _resolve(group)
    work = barrier(group=pg, async_op=True)
    assert work is not None
    work.wait(timeout if timeout is not None else pg._timeout)


def all_to_all(output_tensor_list: list[Any], input_tensor_list: list[Any],
               group: ProcessGroup | None = None, async_op: bool = False) -> Work | None:
    """Send ``input_tensor_list[i]`` to rank ``i``; ``output_tensor_list[j]`` receives rank
    ``j``'s piece.

    Mirrors: ``torch.distributed.all_to_all``.
    """
    pg = _resolve(group)
    everyone: list[Any] = [None] * pg.size()
    all_gather_object(everyone, [np.asarray(_array(t)) for t in input_tensor_list], group=pg)
    for j, out in enumerate(output_tensor_list):
        _write(out, everyone[j][pg.rank()])
    return _done(pg, list(output_tensor_list), async_op)


def all_reduce_coalesced(tensors: list[Any], op: Any = ReduceOp.SUM,
                         group: ProcessGroup | None = None, async_op: bool = False
                         ) -> Work | None:
    """All-reduce each tensor of ``tensors`` (deprecated in PyTorch).

    Mirrors: ``torch.distributed.all_reduce_coalesced``.
    """
    pg = _resolve(group)
    for t in tensors:
        all_reduce(t, op, group=pg)
    return _done(pg, list(tensors), async_op)


def new_subgroups(group_size: int | None = None, group: Any = None, timeout: Any = None,
                  backend: Any = None, pg_options: Any = None,
                  group_desc: Any = None) -> tuple[Any, list[Any]]:
    """Split the world into consecutive groups of ``group_size`` ranks.

    Returns:
        ``(this rank's subgroup, every subgroup)``.

    Raises:
        ValueError: ``group_size`` is not a positive divisor of the world size.

    Mirrors: ``torch.distributed.new_subgroups``.
    """
    from hookgrad.distributed.process_group import get_world_size

    world = get_world_size()
    size = world if group_size is None else group_size
    if size <= 0:
        raise ValueError(f"The arg 'group_size' ({size}) must be positive")
    if world % size != 0:
        raise ValueError(f"The world size ({world}) must be divisible by 'group_size={size}'")
    ranks = [list(range(i, i + size)) for i in range(0, world, size)]
    return new_subgroups_by_enumeration(ranks, timeout, backend, pg_options)


def new_subgroups_by_enumeration(ranks_per_subgroup_list: list[list[int]], timeout: Any = None,
                                 backend: Any = None, pg_options: Any = None,
                                 group_desc: Any = None) -> tuple[Any, list[Any]]:
    """One group per rank list (every rank calls it with the same lists).

    Mirrors: ``torch.distributed.new_subgroups_by_enumeration``.
    """
    from hookgrad.distributed.process_group import GroupMember, get_rank, new_group

    if not ranks_per_subgroup_list:
        raise ValueError("The arg 'ranks_per_subgroup_list' cannot be empty")
    me, mine, groups = get_rank(), None, []
    for ranks in ranks_per_subgroup_list:
        pg = new_group(ranks, timeout=timeout)
        groups.append(pg)
        if me in ranks:
            if mine is not None:
                raise ValueError(f"Rank {me} has appeared in both subgroup {mine} and {ranks}")
            mine = pg
    return (mine if mine is not None else GroupMember.NON_GROUP_MEMBER), groups
