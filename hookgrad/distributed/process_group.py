"""Process groups: initialisation, the default group, sub-groups, rank/size queries.

The default group is per thread when created by the ``threads`` backend (each thread is one
rank of an in-process world) and per process for ``mpi``.
"""

from __future__ import annotations

import threading
from datetime import timedelta
from typing import Any

from hookgrad.distributed._names import BackendType, default_pg_timeout, resolve_engine
from hookgrad.distributed._threads import ThreadComm, ThreadStore

_DEFAULT_TIMEOUT = default_pg_timeout
_pg_count = [0]  # groups created in this process (get_pg_count)
_thread_world = threading.local()
_process_world: list[ProcessGroup | None] = [None]


class ProcessGroup:
    """A set of ranks that run collectives together.

    Mirrors: ``torch.distributed.ProcessGroup``.
    """

    BackendType = BackendType

    def __init__(self, comm: Any, backend: str, timeout: timedelta, name: str = "") -> None:
        self._comm, self._backend, self._timeout = comm, backend, timeout
        self._engine = backend  # "mpi", "threads" or "store"; _backend: the name asked for
        self._timeout_s = timeout.total_seconds()
        self._name = name
        self._pending: list[Any] = []  # Works in flight, polled by `progress`
        self.group_desc = "default_pg" if not name else name  # PyTorch's group description

    def rank(self) -> int:
        """This process's rank inside the group. Mirrors: ``ProcessGroup.rank``."""
        return self._comm.rank

    def size(self) -> int:
        """Number of ranks. Mirrors: ``ProcessGroup.size``."""
        return self._comm.size

    def name(self) -> str:
        """Mirrors: ``ProcessGroup.name`` (the backend name)."""
        return self._backend

    def _global_ranks(self) -> list[int]:
        return list(self._comm.global_ranks)

    def __repr__(self) -> str:
        return f"ProcessGroup(backend={self._backend!r}, rank={self.rank()}, size={self.size()})"


def _default() -> ProcessGroup | None:
    return getattr(_thread_world, "pg", None) or _process_world[0]


def _set_default(old: ProcessGroup, new: ProcessGroup) -> None:
    """Make ``new`` the default group in place of ``old`` (``shrink_group`` of the world)."""
    if getattr(_thread_world, "pg", None) is old:
        _thread_world.pg = new
    else:
        _process_world[0] = new


def _resolve(group: ProcessGroup | None) -> ProcessGroup:
    pg = _default() if group is None else group
    if pg is None:
        raise ValueError(
            "Default process group has not been initialized, please make sure to call "
            "init_process_group.")
    if pg is GroupMember.NON_GROUP_MEMBER:
        raise RuntimeError("This rank is not a member of the group.")
    return pg


class _WorldProperty:
    """``group.WORLD`` / ``GroupMember.WORLD``: the default group of the calling rank."""

    def __get__(self, obj: Any, owner: Any) -> ProcessGroup | None:
        return _default()


class GroupMember:
    """Mirrors: ``torch.distributed.GroupMember`` (``WORLD``, ``NON_GROUP_MEMBER``)."""

    WORLD = _WorldProperty()
    NON_GROUP_MEMBER = -100  # PyTorch's sentinel value


class group:  # noqa: N801 - torch's spelling
    """Mirrors: ``torch.distributed.group`` (``group.WORLD``)."""

    WORLD = _WorldProperty()


def _to_timedelta(timeout: Any) -> timedelta:
    if timeout is None:
        return _DEFAULT_TIMEOUT
    if isinstance(timeout, timedelta):
        return timeout
    raise TypeError(f"timeout must be a datetime.timedelta, got {type(timeout).__name__}")


def init_process_group(backend: str | None = None, init_method: str | None = None,
                       timeout: timedelta | None = None, world_size: int = -1, rank: int = -1,
                       store: Any = None, group_name: str = "", pg_options: Any = None,
                       device_id: Any = None) -> None:
    """Initialise the default process group.

    ``backend="mpi"``: rank and size come from ``MPI.COMM_WORLD`` (launch with ``mpiexec -n N``;
    without a launcher the world has one rank). ``backend="threads"``: an in-process group whose
    ranks are threads sharing ``store`` (a `ThreadStore`); see `hookgrad.testing.run_ranks`.

    Raises:
        ValueError: If the default group is already initialised, or for an unknown backend.
        ImportError: ``"mpi"`` without mpi4py (says how to install it).

    Mirrors: ``torch.distributed.init_process_group``.
    """
    if _default() is not None:
        raise ValueError("trying to initialize the default process group twice!")
    td = _to_timedelta(timeout)
    engine = resolve_engine(backend, world_size, store, init_method)
    if engine == "mpi":
        pg = _process_world[0] = _init_mpi(td, world_size, rank)
    elif engine == "store":
        pg = _process_world[0] = _init_store(td, world_size, rank, store, init_method)
    else:
        if world_size == -1 and rank == -1 and backend is not None and \
                str(backend).lower() == "gloo" and store is None:
            world_size, rank = 1, 0  # a one-rank gloo world without MPI
        pg = _thread_world.pg = _init_threads(td, world_size, rank, store, group_name)
    # get_backend() reports the name asked for ("gloo" for gloo programs), the engine runs it
    pg._backend = str(backend).lower() if backend is not None else engine
    _pg_count[0] += 1


def _init_mpi(timeout: timedelta, world_size: int, rank: int) -> ProcessGroup:
    from hookgrad.distributed._mpi import MpiComm, import_mpi

    MPI = import_mpi()
    world = MPI.COMM_WORLD
    size, me = world.Get_size(), world.Get_rank()
    if world_size not in (-1, size) or rank not in (-1, me):
        raise ValueError(
            f"backend 'mpi' takes rank and world size from MPI (rank {me} of {size}); got "
            f"rank={rank}, world_size={world_size}")
    return ProcessGroup(MpiComm(world, list(range(size)), me, timeout.total_seconds()), "mpi",
                        timeout)


def _init_store(timeout: timedelta, world_size: int, rank: int, store: Any,
                init_method: str | None) -> ProcessGroup:
    """Processes meeting through ``store``, or the store of the ``init_method`` rendezvous
    (``env://`` by default, as PyTorch)."""
    from hookgrad.distributed._store_engine import StoreComm

    if store is None:
        from hookgrad.distributed.rendezvous import rendezvous

        store, rank, world_size = next(rendezvous(init_method or "env://", rank, world_size,
                                                  timeout=timeout))
    if world_size < 1 or not 0 <= rank < world_size:
        raise ValueError(f"backend 'gloo' needs 0 <= rank < world_size; got rank={rank}, "
                         f"world_size={world_size}")
    store.set_timeout(timeout)
    comm = StoreComm(store, ("default_pg",), list(range(world_size)), rank,
                     timeout.total_seconds())
    return ProcessGroup(comm, "store", timeout)


_shared_stores: dict[tuple[str, int], ThreadStore] = {}
_shared_lock = threading.Lock()


def _shared_store(group_name: str, world_size: int) -> ThreadStore:
    """The store that threads calling ``init_process_group("threads", store=None)`` with the
    same ``group_name`` and ``world_size`` meet in; dropped once every rank destroyed it."""
    with _shared_lock:
        store = _shared_stores.get((group_name, world_size))
        if store is None or store.joined >= world_size:
            store = _shared_stores[(group_name, world_size)] = ThreadStore(world_size)
        store.joined += 1
        store.shared_key = (group_name, world_size)
        return store


def _init_threads(timeout: timedelta, world_size: int, rank: int, store: Any,
                  group_name: str) -> ProcessGroup:
    if world_size < 1 or not 0 <= rank < world_size:
        raise ValueError(f"backend 'threads' needs 0 <= rank < world_size; got rank={rank}, "
                         f"world_size={world_size}")
    if store is None:
        store = _shared_store(group_name, world_size)
    if not isinstance(store, ThreadStore):
        raise ValueError("backend 'threads' needs store=ThreadStore(world_size) shared by the "
                         "rank threads (or store=None: threads meet by group_name)")
    if world_size != store.world_size:
        raise ValueError(f"invalid world_size {world_size} for a store of {store.world_size} "
                         "ranks")
    comm = ThreadComm(store, ("world",), list(range(world_size)), rank)
    return ProcessGroup(comm, "threads", timeout)


def is_initialized() -> bool:
    """Mirrors: ``torch.distributed.is_initialized``."""
    return _default() is not None


def get_rank(group: ProcessGroup | None = None) -> int:
    """Rank of this process in ``group`` (default group when None), -1 for a non-member.

    Mirrors: ``torch.distributed.get_rank``.
    """
    if group is GroupMember.NON_GROUP_MEMBER:
        return -1
    return _resolve(group).rank()


def get_world_size(group: ProcessGroup | None = None) -> int:
    """Mirrors: ``torch.distributed.get_world_size``."""
    if group is GroupMember.NON_GROUP_MEMBER:
        return -1
    return _resolve(group).size()


def get_backend(group: ProcessGroup | None = None) -> str:
    """Mirrors: ``torch.distributed.get_backend``."""
    return _resolve(group)._backend


def new_group(ranks: list[int] | None = None, timeout: timedelta | None = None,
              backend: str | None = None, pg_options: Any = None) -> Any:
    """A sub-group of the default group; every rank must call it (in the same order).

    Returns ``GroupMember.NON_GROUP_MEMBER`` on ranks outside ``ranks``.

    Mirrors: ``torch.distributed.new_group``.
    """
    world = _resolve(None)
    members = sorted(range(world.size()) if ranks is None else set(ranks))
    if any(not 0 <= r < world.size() for r in members):
        raise ValueError(f"new_group: ranks {ranks} out of range for world size {world.size()}")
    comm = world._comm.sub(members)
    if comm is None:
        return GroupMember.NON_GROUP_MEMBER
    td = world._timeout if timeout is None else _to_timedelta(timeout)
    _pg_count[0] += 1
    sub = ProcessGroup(comm, world._engine, td)
    sub._backend = world._backend
    return sub


def destroy_process_group(group: ProcessGroup | None = None) -> None:
    """Release ``group`` (the default group, and so the whole world, when None).

    Mirrors: ``torch.distributed.destroy_process_group``.
    """
    if group is None and _default() is None:
        raise AssertionError("Process group cannot be None")
    pg = _resolve(group)
    if group is None or pg is _default():
        if getattr(_thread_world, "pg", None) is pg:
            _thread_world.pg = None
        else:
            _process_world[0] = None
    if pg._engine in ("mpi", "store"):
        pg._comm.close()
    elif group is None and getattr(pg._comm.store, "shared_key", None) is not None:
        with _shared_lock:  # the last rank out forgets the shared store
            store = pg._comm.store
            store.left += 1
            if store.left == store.world_size and \
                    _shared_stores.get(store.shared_key) is store:
                del _shared_stores[store.shared_key]


def progress(group: ProcessGroup | None = None) -> None:
    """Advance every collective in flight on ``group`` without completing their futures.

    The DDP reducer calls this between gradient events so transfers move while backward runs.
    Futures (and so callbacks, which may issue collectives) complete only in ``wait``: if
    polling ran callbacks, the moment a completion is noticed would decide the order of the
    collectives those callbacks issue, and that moment differs across ranks (PowerSGD's chain
    would then mismatch). Waiting in bucket order keeps that order the same on every rank.
    """
    pg = _default() if group is None else group
    if pg is None:
        return
    pg._comm.progress()
    for work in list(pg._pending):
        work._drive()


def get_process_group_ranks(group: ProcessGroup | None) -> list[int]:
    """The global ranks of ``group``'s members, in group-rank order.

    Mirrors: ``torch.distributed.get_process_group_ranks``.
    """
    return _resolve(group)._global_ranks()


def get_global_rank(group: ProcessGroup | None, group_rank: int) -> int:
    """The global rank of ``group_rank`` in ``group`` (identity for the default group).

    Raises:
        ValueError: When ``group_rank`` is not a rank of ``group``.

    Mirrors: ``torch.distributed.get_global_rank``.
    """
    if group is None or group is _default():
        return group_rank
    ranks = _resolve(group)._global_ranks()
    if not 0 <= group_rank < len(ranks):
        raise ValueError(f"Group rank {group_rank} is not part of group {group}")
    return ranks[group_rank]


def get_group_rank(group: ProcessGroup | None, global_rank: int) -> int:
    """The rank inside ``group`` of global rank ``global_rank``.

    Raises:
        ValueError: When ``global_rank`` is not a member of ``group``.

    Mirrors: ``torch.distributed.get_group_rank``.
    """
    if group is None or group is _default():
        return global_rank
    ranks = _resolve(group)._global_ranks()
    if global_rank not in ranks:
        raise ValueError(f"Global rank {global_rank} is not part of group {group}")
    return ranks.index(global_rank)


def get_pg_count() -> int:
    """Number of process groups created in this process (default group included).

    Mirrors: ``torch.distributed.get_pg_count``.
    """
    return _pg_count[0]


def get_backend_config(group: ProcessGroup | None = None) -> str:
    """``"cpu:<backend>"``. Mirrors: ``torch.distributed.get_backend_config``."""
    return f"cpu:{_resolve(group)._backend}"


def _get_default_group() -> ProcessGroup:
    """The default group (PyTorch's private helper, used by many libraries)."""
    return _resolve(None)
