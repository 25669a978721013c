"""``split_group`` and ``shrink_group``: new groups carved out of an existing one.

PyTorch 2.13 runs these only on backends that can split or shrink a communicator (NCCL, XCCL;
its gloo raises). hookgrad's engines can: a split creates the member's sub-group the way
``new_group`` does (MPI ``Comm.Create_group`` among the members only, or a new key in the
threads engine's store), so ranks outside every split take no part.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from hookgrad.distributed.process_group import ProcessGroup, _default, _pg_count, _resolve, \
    _set_default, _to_timedelta

SHRINK_DEFAULT = 0  # PyTorch's shrink_flags values
SHRINK_ABORT = 1


def _child(parent: ProcessGroup, global_ranks: list[int], timeout: timedelta | None,
           desc: str) -> ProcessGroup | None:
    comm = parent._comm.sub(global_ranks)
    if comm is None:
        return None
    td = parent._timeout if timeout is None else _to_timedelta(timeout)
    pg = ProcessGroup(comm, parent._engine, td)
    pg._backend, pg.group_desc = parent._backend, desc
    _pg_count[0] += 1
    return pg


def split_group(parent_pg: ProcessGroup | None = None, split_ranks: list | None = None,
                timeout: timedelta | None = None, pg_options: Any = None,
                group_desc: str | None = None, backend: Any = None) -> ProcessGroup | None:
    """Split ``parent_pg`` (default group when None) into the disjoint groups of
    ``split_ranks`` (lists of ranks *inside the parent*); every parent rank must call it.

    Returns this rank's new group, or None when it is in no split.

    Raises:
        ValueError: ``split_ranks`` empty, a split empty, larger than the world, or with
            duplicate ranks; this rank not in ``parent_pg``.

    Mirrors: ``torch.distributed.split_group`` (PyTorch's gloo raises instead: it cannot
    split).
    """
    if not split_ranks:
        raise ValueError("split_ranks cannot be None or empty")
    world = _resolve(None)
    parent = world if parent_pg is None else _resolve(parent_pg)
    if backend is not None and str(backend).lower() not in (parent._backend, f"cpu:"
                                                             f"{parent._backend}"):
        raise ValueError(f"Backend mismatch for device 'cpu': parent has '{parent._backend}', "
                         f"requested '{backend}'. Backend names must match exactly when "
                         "filtering split_group backends.")
    mine = None
    for ranks in split_ranks:
        if len(ranks) == 0:
            raise ValueError("the split group cannot be empty")
        if len(ranks) > world.size():
            raise ValueError("the split group's size should be less or equal to the world_size "
                             "set by init_process_group")
        if len(ranks) != len(set(ranks)):
            raise ValueError("the split group cannot have duplicate ranks")
        if mine is None and parent.rank() in ranks:
            mine = sorted(ranks)
    if mine is None:
        return None
    members = parent._global_ranks()
    desc = group_desc or f"{getattr(parent, 'group_desc', 'default_pg')}:split"
    return _child(parent, [members[r] for r in mine], timeout, desc)


def shrink_group(ranks_to_exclude: list[int], group: ProcessGroup | None = None,
                 shrink_flags: int = SHRINK_DEFAULT, pg_options: Any = None) -> ProcessGroup:
    """A new group of ``group``'s ranks (default group when None) minus ``ranks_to_exclude``
    (ranks inside ``group``); only the remaining ranks call it.

    Shrinking the default group makes the new group the default one, with ranks renumbered
    ``0..n-1`` (as PyTorch's global ranks are after a shrink).

    Raises:
        TypeError: ``ranks_to_exclude`` is not a list of ints.
        ValueError: It is empty, out of range, has duplicates or excludes every rank; a bad
            ``shrink_flags``; a group of one rank.
        RuntimeError: This rank is excluded.

    Mirrors: ``torch.distributed.shrink_group``.
    """
    if not isinstance(ranks_to_exclude, list):
        raise TypeError(f"ranks_to_exclude must be a list, but got "
                        f"{type(ranks_to_exclude).__name__}. Example: [1, 3, 5] to exclude "
                        "ranks 1, 3, and 5.")
    if not ranks_to_exclude:
        raise ValueError("ranks_to_exclude cannot be empty. To shrink a group, you must specify "
                         "at least one rank to exclude. Example: [failed_rank_id]")
    if not isinstance(shrink_flags, int) or shrink_flags not in (SHRINK_DEFAULT, SHRINK_ABORT):
        raise ValueError(f"Invalid shrink_flags value: {shrink_flags}. Must be one of: "
                         f"SHRINK_DEFAULT ({SHRINK_DEFAULT}) or SHRINK_ABORT ({SHRINK_ABORT}). "
                         "Use SHRINK_ABORT to abort ongoing operations before shrinking.")
    target = _resolve(group)
    is_default = target is _default()
    size = target.size()
    if size <= 1:
        raise ValueError(f"Cannot shrink a process group with size {size}. Group must have at "
                         "least 2 ranks to support shrinking.")
    excluded: set[int] = set()
    for i, r in enumerate(ranks_to_exclude):
        if not isinstance(r, int):
            raise TypeError(f"All elements in ranks_to_exclude must be integers. Element at "
                            f"index {i} is {type(r).__name__}: {r}")
        if not 0 <= r < size:
            raise ValueError(f"Rank {r} at index {i} is out of bounds for group size {size}. "
                             f"Valid ranks are in range [0, {size - 1}].")
        if r in excluded:
            raise ValueError(f"Duplicate rank {r} found in ranks_to_exclude at index {i}. Each "
                             "rank can only be excluded once.")
        excluded.add(r)
    if len(excluded) >= size:
        raise ValueError(f"Cannot exclude all {size} ranks from process group. At least one "
                         f"rank must remain. Excluding {len(excluded)} ranks.")
    if target.rank() in excluded:
        raise RuntimeError(f"Current rank {target.rank()} is in the exclusion list and should "
                           "not call shrink_group(). Only non-excluded ranks should participate "
                           "in the shrinking operation. Excluded ranks should terminate their "
                           "processes instead.")
    members = target._global_ranks()
    remaining = [g for r, g in enumerate(members) if r not in excluded]
    desc = "default:shrunken" if is_default else f"{target.group_name}:shrunk"
    new = _child(target, remaining, None, desc)
    assert new is not None  # this rank remains
    if is_default:  # the shrunk group is the new world: ranks renumbered 0..n-1
        new._comm.global_ranks = list(range(len(remaining)))
        new._comm.global_rank = new._comm.rank
        _set_default(target, new)
    return new
