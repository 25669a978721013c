"""`ProcessGroupGloo`: a process group built directly from a store, as PyTorch's gloo class is.

hookgrad has no gloo library; the group runs on the engine the store and the launch allow
the ``threads`` engine for a `ThreadStore` shared by rank threads (or a group of one), ``mpi``
for the whole world of an ``mpiexec`` launch.
"""

from __future__ import annotations

import socket
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from hookgrad.distributed._threads import ThreadComm, ThreadStore
from hookgrad.distributed.process_group import ProcessGroup


@dataclass(frozen=True)
class _Device:
    """A transport endpoint record. Mirrors: ``torch.distributed.ProcessGroupGloo.Device``."""

    hostname: str = ""
    interface: str = ""


class _Options:
    """Mirrors: ``torch.distributed.ProcessGroupGloo.Options``."""

    def __init__(self, timeout: timedelta = timedelta(minutes=30)) -> None:
        self._timeout = timeout
        self.backend = "gloo"
        self.global_ranks_in_group: list[int] = []
        self.group_name = ""
        self._devices: list[_Device] = []
        self._threads = 2


class ProcessGroupGloo(ProcessGroup):
    """``ProcessGroupGloo(store, rank, size, timeout)`` or ``(store, rank, size, options)``.

    Raises:
        ValueError: ``rank`` outside ``size``; a store/launch neither engine can serve (rank
            threads need a `ThreadStore`; processes need an MPI launch of ``size`` ranks).

    Mirrors: ``torch.distributed.ProcessGroupGloo`` (backend name ``"gloo"``).
    """

    Options = _Options
    _Options = _Options
    Device = _Device

    def __init__(self, store: Any, rank: int, size: int,
                 timeout: timedelta | _Options = timedelta(minutes=30)) -> None:
        options = timeout if isinstance(timeout, _Options) else _Options(timeout)
        if not 0 <= rank < size:
            raise ValueError(f"ProcessGroupGloo: rank {rank} outside a group of {size}")
        td = options._timeout
        if size == 1 and not isinstance(store, ThreadStore):  # a world of one needs no peers
            store = ThreadStore(1)
        if isinstance(store, ThreadStore):
            if store.world_size != size:
                raise ValueError(f"invalid size {size} for a ThreadStore of "
                                 f"{store.world_size} ranks")
            with store.cond:  # the n-th gloo group on this store, numbered alike on every rank
                n = store.groups.get(("gloo", rank), 0)
                store.groups[("gloo", rank)] = n + 1
            comm: Any = ThreadComm(store, ("gloo", n), list(range(size)), rank)
            engine = "threads"
        else:
            comm, engine = _mpi_world(rank, size, td), "mpi"
        super().__init__(comm, engine, td, options.group_name)
        self._backend = "gloo"
        self.options = options

    @staticmethod
    def create_device(hostname: str = "", interface: str = "",
                      lazy_init: bool | None = None) -> _Device:
        """Mirrors: ``torch.distributed.ProcessGroupGloo.create_device``."""
        return _Device(hostname, interface)

    @staticmethod
    def create_default_device(lazy_init: bool | None = None) -> _Device:
        """Mirrors: ``torch.distributed.ProcessGroupGloo.create_default_device``."""
        return _Device(socket.gethostname(), "")

    @property
    def supports_splitting(self) -> bool:
        """Mirrors: ``ProcessGroupGloo.supports_splitting`` (hookgrad's engines can split)."""
        return True


def _mpi_world(rank: int, size: int, timeout: timedelta) -> Any:
    from hookgrad.distributed._mpi import MpiComm, import_mpi
    from hookgrad.distributed._names import under_mpi_launcher

    if under_mpi_launcher():
        world = import_mpi().COMM_WORLD
        if world.Get_size() == size and world.Get_rank() == rank:
            return MpiComm(world, list(range(size)), rank, timeout.total_seconds())
    raise ValueError(
        f"ProcessGroupGloo(rank={rank}, size={size}): hookgrad runs gloo groups of processes "
        "over MPI (launch with `mpiexec -n N`, ranks and size as MPI's) or of threads sharing a "
        "ThreadStore (docs/distributed.md)")
