"""Backend names, debug levels, availability predicates and option records of
``torch.distributed`` that need no process group.

hookgrad runs two engines, ``mpi`` (mpi4py + MPICH, one process per rank) and ``threads`` (ranks
as threads of one process). PyTorch's CPU backend name ``gloo`` is accepted and mapped onto them
(`resolve_engine`, docs/distributed.md): programs written for ``gloo`` run unchanged.
"""

from __future__ import annotations

import enum
import importlib.util
import os
import threading
from datetime import timedelta
from typing import Any

default_pg_timeout = timedelta(minutes=30)  # torch's default for CPU backends

# Environment variables set by MPI launchers (MPICH/Hydra, Open MPI, Slurm's PMI).
_MPI_LAUNCH_ENV = ("PMI_RANK", "PMI_SIZE", "PMIX_RANK", "OMPI_COMM_WORLD_RANK", "MPI_LOCALRANKID")


class BackendType(enum.IntEnum):
    """Mirrors: ``torch.distributed.ProcessGroup.BackendType``."""

    UNDEFINED = 0
    GLOO = 1
    NCCL = 2
    UCC = 3
    MPI = 4
    XCCL = 5
    CUSTOM = 6

    def __str__(self) -> str:
        return f"BackendType.{self.name}"


class Backend(str):
    """An enum-like class of backend names; calling it lower-cases a name.

    Example:
        >>> Backend("GLOO"), Backend.MPI
        ('gloo', 'mpi')

    Mirrors: ``torch.distributed.Backend`` (the names are PyTorch's; hookgrad runs ``gloo`` on
    its ``mpi``/``threads`` engines and has no ``nccl``/``ucc``/``xccl``).
    """

    UNDEFINED = "undefined"
    GLOO = "gloo"
    NCCL = "nccl"
    UCC = "ucc"
    MPI = "mpi"
    XCCL = "xccl"
    FAKE = "fake"
    THREADS = "threads"  # hookgrad's in-process engine (no PyTorch counterpart)

    backend_list = ["undefined", "gloo", "nccl", "xccl", "ucc", "mpi", "fake"]
    default_device_backend_map = {"cpu": "gloo", "cuda": "nccl", "xpu": "xccl", "mps": "gloo"}
    backend_type_map = {"undefined": BackendType.UNDEFINED, "gloo": BackendType.GLOO,
                        "nccl": BackendType.NCCL, "xccl": BackendType.XCCL,
                        "ucc": BackendType.UCC, "mpi": BackendType.MPI,
                        "fake": BackendType.CUSTOM}
    backend_capability = {"gloo": ["cpu", "cuda"], "nccl": ["cuda"], "xccl": ["xpu"],
                          "ucc": ["cpu", "cuda"], "mpi": ["cpu", "cuda"],
                          "fake": ["cpu", "cuda", "hpu", "xpu"]}

    def __new__(cls, name: str) -> Backend:  # type: ignore[misc]
        if not isinstance(name, str):
            raise ValueError("Backend constructor parameter must be string-ish")
        value = getattr(Backend, name.upper(), Backend.UNDEFINED)
        if value == Backend.UNDEFINED:
            value = name.lower()
        return value  # type: ignore[return-value]

    @classmethod
    def register_backend(cls, name: str, func: Any, extended_api: bool = False,
                         devices: str | list[str] | None = None) -> None:
        """Third-party process-group backends cannot be plugged into hookgrad's engines.

        Raises:
            NotImplementedError: Always.

        Mirrors: ``torch.distributed.Backend.register_backend``.
        """
        raise NotImplementedError(
            f"hookgrad cannot register backend {name!r}: its collectives run on the built-in "
            "'mpi' and 'threads' engines only")


class BackendConfig:
    """Which backend serves which device type, parsed from a backend string (``"gloo"``, or
    ``"cpu:gloo,cuda:nccl"``); ``"undefined"`` picks the CPU default.

    Example:
        >>> BackendConfig("gloo"), BackendConfig("cpu:gloo").get_device_backend_map()
        (cpu:gloo,cuda:gloo, {'cpu': 'gloo'})

    Raises:
        ValueError: A malformed ``device:backend`` pair or a device named twice.

    Mirrors: ``torch.distributed.BackendConfig``.
    """

    def __init__(self, backend: str) -> None:
        text = str(backend)
        self.device_backend_map: dict[str, Backend] = {}
        if text == Backend.UNDEFINED:  # no accelerator here: the CPU's default
            self.device_backend_map["cpu"] = Backend(Backend.default_device_backend_map["cpu"])
        elif text.lower() in Backend.backend_list:
            self.device_backend_map = dict.fromkeys(Backend.backend_capability[text.lower()],
                                                    Backend(text))
        elif ":" in text:
            for pair in text.lower().split(","):
                parts = pair.split(":")
                if len(parts) != 2:
                    raise ValueError(f"Invalid device:backend pairing: {pair}. The backend "
                                     "string must read '<device_type1>:<backend1>,...', e.g. "
                                     "'cpu:gloo,cuda:nccl'")
                if parts[0] in self.device_backend_map:
                    raise ValueError(f"Duplicate device type {parts[0]} in backend string: "
                                     f"{text}")
                self.device_backend_map[parts[0]] = Backend(parts[1])
        else:
            import warnings

            warnings.warn(f"Device capability of {text} unknown, assuming `cpu` and `cuda`. "
                          "You can specify it in `device:backend` format in "
                          "`init_process_group` call.", stacklevel=2)
            self.device_backend_map = dict.fromkeys(("cpu", "cuda", "xpu"), Backend(text))

    def __repr__(self) -> str:
        return ",".join(f"{d}:{b}" for d, b in self.device_backend_map.items())

    def get_device_backend_map(self) -> dict[str, Backend]:
        """Mirrors: ``torch.distributed.BackendConfig.get_device_backend_map``."""
        return self.device_backend_map


class DebugLevel(enum.IntEnum):
    """``TORCH_DISTRIBUTED_DEBUG`` levels (recorded; hookgrad's messages do not depend on them).

    Mirrors: ``torch.distributed.DebugLevel``.
    """

    OFF = 0
    INFO = 1
    DETAIL = 2

    def __str__(self) -> str:
        return f"DebugLevel.{self.name}"


_debug_level = [DebugLevel.OFF]


def get_debug_level() -> DebugLevel:
    """Mirrors: ``torch.distributed.get_debug_level``."""
    return _debug_level[0]


def set_debug_level(level: DebugLevel) -> None:
    """Mirrors: ``torch.distributed.set_debug_level``."""
    _debug_level[0] = DebugLevel(level)


def set_debug_level_from_env() -> None:
    """Read ``TORCH_DISTRIBUTED_DEBUG`` (OFF, INFO or DETAIL, any case).

    Raises:
        ValueError: For another value.

    Mirrors: ``torch.distributed.set_debug_level_from_env``.
    """
    value = os.environ.get("TORCH_DISTRIBUTED_DEBUG", "OFF").upper()
    if value not in DebugLevel.__members__:
        raise ValueError("The value of TORCH_DISTRIBUTED_DEBUG must be OFF, INFO, or DETAIL.")
    _debug_level[0] = DebugLevel[value]


def is_available() -> bool:
    """Mirrors: ``torch.distributed.is_available``."""
    return True


def is_mpi_available() -> bool:
    """True when mpi4py is installed (the ``mpi`` engine; PyTorch's CPU wheel says False).

    Mirrors: ``torch.distributed.is_mpi_available``.
    """
    return importlib.util.find_spec("mpi4py") is not None


def is_gloo_available() -> bool:
    """True: ``gloo`` is accepted and mapped onto hookgrad's engines.

    Mirrors: ``torch.distributed.is_gloo_available``.
    """
    return True


def is_nccl_available() -> bool:
    """Mirrors: ``torch.distributed.is_nccl_available`` (no NCCL on hookgrad's CPU engines)."""
    return False


def is_ucc_available() -> bool:
    """Mirrors: ``torch.distributed.is_ucc_available``."""
    return False


def is_xccl_available() -> bool:
    """Mirrors: ``torch.distributed.is_xccl_available``."""
    return False


def is_backend_available(backend: str) -> bool:
    """Whether ``init_process_group(backend)`` can work here.

    Mirrors: ``torch.distributed.is_backend_available``.
    """
    name = Backend(backend) if isinstance(backend, str) else backend
    return {"gloo": True, "threads": True, "mpi": is_mpi_available()}.get(name, False)


def is_torchelastic_launched() -> bool:
    """Mirrors: ``torch.distributed.is_torchelastic_launched`` (``TORCHELASTIC_RUN_ID`` set)."""
    return os.getenv("TORCHELASTIC_RUN_ID") is not None


def get_default_backend_for_device(device: Any) -> str:
    """``"gloo"`` for ``cpu``.

    Raises:
        ValueError: For a device type without a default backend.

    Mirrors: ``torch.distributed.get_default_backend_for_device``.
    """
    kind = str(getattr(device, "type", device)).split(":")[0]
    if kind not in Backend.default_device_backend_map:
        raise ValueError(f"Default backend not registered for device : {kind}")
    return Backend.default_device_backend_map[kind]


def get_node_local_rank(fallback_rank: int | None = None) -> int:
    """``LOCAL_RANK`` (or MPI's local rank id) from the environment, else ``fallback_rank``.

    Raises:
        RuntimeError: Neither is available.

    Mirrors: ``torch.distributed.get_node_local_rank``.
    """
    for var in ("LOCAL_RANK", "MPI_LOCALRANKID", "OMPI_COMM_WORLD_LOCAL_RANK"):
        if var in os.environ:
            return int(os.environ[var])
    if fallback_rank is not None:
        return int(fallback_rank)
    raise RuntimeError(
        "LOCAL_RANK is not in the environment. Consider passing fallback_rank to allow "
        "`get_node_local_rank` to work, assuming you are not running in a multi-device context "
        "and want the code to run locally instead.")


def supports_complex(reduce_op: Any) -> bool:
    """Whether ``reduce_op`` is defined on complex tensors (not MAX, MIN, PRODUCT, bitwise).

    Mirrors: ``torch.distributed.supports_complex``.
    """
    return int(reduce_op) not in (2, 3, 4, 5, 6, 7)  # PRODUCT MIN MAX BAND BOR BXOR


def under_mpi_launcher() -> bool:
    """Whether this process was started by an MPI launcher (``mpiexec``/``srun``)."""
    return any(var in os.environ for var in _MPI_LAUNCH_ENV)


def resolve_engine(backend: str | None, world_size: int, store: Any,
                   init_method: str | None = None) -> str:
    """The engine (``"mpi"``, ``"threads"`` or ``"store"``) that runs ``backend``.

    ``gloo`` (and no backend) map onto ``threads`` when a `ThreadStore` is given or when the
    caller is not the main thread (ranks as threads meeting by group name); onto ``mpi`` under
    an MPI launcher, or for a one-rank world without one; and onto ``store`` for processes that
    meet through a store: a ``store=`` given, or an ``init_method``/``MASTER_ADDR`` rendezvous.

    Raises:
        ValueError: For an unknown name, a GPU-only backend, or ``gloo`` across processes
            with neither an MPI launcher nor a way to meet (no store, no rendezvous address).
    """
    name = Backend(backend) if backend is not None else Backend.GLOO
    if name in (Backend.MPI, Backend.THREADS):
        return name
    if name in (Backend.NCCL, Backend.UCC, Backend.XCCL):
        raise ValueError(f"backend {backend!r} is not available in hookgrad (no GPU "
                         "collectives); use 'gloo', 'mpi' or 'threads'")
    if name != Backend.GLOO:
        raise ValueError(f"Invalid backend: '{backend}'")
    from hookgrad.distributed._threads import ThreadStore

    if isinstance(store, ThreadStore) or threading.current_thread() is not \
            threading.main_thread():
        return Backend.THREADS
    alone = world_size in (-1, 1)
    if under_mpi_launcher():
        return Backend.THREADS if alone and not is_mpi_available() else Backend.MPI
    env_world = int(os.environ.get("WORLD_SIZE") or -1)
    if world_size != 1 and (store is not None or init_method not in (None, "env://") or (
            "MASTER_ADDR" in os.environ and max(world_size, env_world) > 1)):
        return "store"
    if alone:  # a one-rank world needs no peers
        return Backend.MPI if is_mpi_available() else Backend.THREADS
    raise ValueError(
        f"backend 'gloo' with world_size={world_size}: the ranks need a way to meet: an "
        "init_method (tcp://, file://, env:// with MASTER_ADDR/MASTER_PORT), a store=, or an "
        "MPI launch (`mpiexec -n N python script.py`) (docs/distributed.md)")


class ReduceOp:
    """Reduction operators of `all_reduce`; ``ReduceOp(op)`` wraps a member.

    The members and their values are PyTorch's. ``BAND``/``BOR``/``BXOR`` need integer or bool
    tensors; ``PREMUL_SUM`` is not supported by the CPU engines (as with gloo).

    Example:
        >>> ReduceOp.SUM == ReduceOp(ReduceOp.SUM), int(ReduceOp.AVG)
        (True, 1)

    Mirrors: ``torch.distributed.ReduceOp``.
    """

    class RedOpType(enum.IntEnum):
        """Mirrors: ``torch.distributed.ReduceOp.RedOpType``."""

        SUM = 0
        AVG = 1
        PRODUCT = 2
        MIN = 3
        MAX = 4
        BAND = 5
        BOR = 6
        BXOR = 7
        PREMUL_SUM = 8

        def __str__(self) -> str:
            return f"RedOpType.{self.name}"

    SUM = RedOpType.SUM
    AVG = RedOpType.AVG
    PRODUCT = RedOpType.PRODUCT
    MIN = RedOpType.MIN
    MAX = RedOpType.MAX
    BAND = RedOpType.BAND
    BOR = RedOpType.BOR
    BXOR = RedOpType.BXOR
    PREMUL_SUM = RedOpType.PREMUL_SUM

    def __init__(self, op: Any = RedOpType.SUM) -> None:
        if isinstance(op, ReduceOp):
            op = op.op
        if not isinstance(op, ReduceOp.RedOpType):
            raise TypeError(f"__init__(): incompatible constructor arguments: ReduceOp takes a "
                            f"ReduceOp.RedOpType, got {type(op).__name__}")
        self._op = op
        self._factor: Any = None  # PREMUL_SUM's scale (a number or a tensor)

    @property
    def op(self) -> ReduceOp.RedOpType:
        """The `RedOpType` member. Mirrors: ``torch.distributed.ReduceOp.op``."""
        return self._op

    @op.setter
    def op(self, value: ReduceOp.RedOpType) -> None:
        self._op = ReduceOp.RedOpType(value)

    @property
    def factor(self) -> Any:
        """The scale of a ``PREMUL_SUM`` op.

        Raises:
            RuntimeError: For any other op.

        Mirrors: ``torch.distributed.ReduceOp.factor``.
        """
        if self._op != ReduceOp.RedOpType.PREMUL_SUM:
            raise RuntimeError("Only PREMUL_SUM supports accessing factor")
        return self._factor

    def __int__(self) -> int:
        return int(self.op)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, ReduceOp):
            return self.op == other.op
        return bool(self.op == other)

    def __hash__(self) -> int:
        return hash(self.op)

    def __repr__(self) -> str:
        return f"<ReduceOp {self.op.name}>"


class _DeprecatedReduceOp:
    """``torch.distributed.reduce_op``: the old name of `ReduceOp`, warning on every use.

    Mirrors: ``torch.distributed.reduce_op``.
    """

    def __getattr__(self, name: str) -> Any:
        import warnings

        if name.startswith("_"):  # introspection (doctest, inspect) is not a use
            raise AttributeError(name)
        warnings.warn("`torch.distributed.reduce_op` is deprecated, please use "
                      "`torch.distributed.ReduceOp` instead", FutureWarning, stacklevel=2)
        return getattr(ReduceOp, name)


class _Options:
    """Base of the collective option records (plain attribute holders)."""

    _fields: tuple[str, ...] = ()

    def __init__(self) -> None:
        for field in self._fields:
            default: Any = timedelta(milliseconds=-1) if field == "timeout" else 0
            if field == "reduceOp":
                default = ReduceOp.SUM
            elif field == "asyncOp":
                default = True
            elif field == "device_ids":
                default = []
            setattr(self, field, default)


def _options(name: str, *fields: str) -> type:
    doc = f"Options of a ProcessGroup collective.\n\n    Mirrors: ``torch.distributed.{name}``.\n"
    return type(name, (_Options,), {"_fields": fields, "__doc__": doc,
                                    "__module__": __name__})


AllreduceOptions = _options("AllreduceOptions", "asyncOp", "reduceOp", "timeout")
AllreduceCoalescedOptions = _options("AllreduceCoalescedOptions", "asyncOp", "reduceOp",
                                     "timeout")
BroadcastOptions = _options("BroadcastOptions", "asyncOp", "rootRank", "rootTensor", "timeout")
ReduceOptions = _options("ReduceOptions", "asyncOp", "reduceOp", "rootRank", "rootTensor",
                         "timeout")
ReduceScatterOptions = _options("ReduceScatterOptions", "asyncOp", "reduceOp", "timeout")
AllgatherOptions = _options("AllgatherOptions", "asyncOp", "timeout")
GatherOptions = _options("GatherOptions", "asyncOp", "rootRank", "timeout")
ScatterOptions = _options("ScatterOptions", "asyncOp", "rootRank", "timeout")
BarrierOptions = _options("BarrierOptions", "asyncOp", "device_ids", "timeout")
AllToAllOptions = _options("AllToAllOptions", "asyncOp", "timeout")
