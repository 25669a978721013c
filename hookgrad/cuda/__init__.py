"""``hookgrad.cuda``: what scripts ask before choosing a device, as on a CPU-only PyTorch build.

Mirrors: ``torch.cuda`` of a PyTorch built without CUDA. The CuPy backend behind the
array-namespace seam of `hookgrad._backend` is not built yet, so ``is_available()`` is True only
where CuPy finds a GPU, and tensors stay on the CPU. Queries that PyTorch answers without a GPU
(memory counters, ``is_initialized``, seeding) answer the same; those that need a device raise
PyTorch's ``AssertionError("Torch not compiled with CUDA enabled")``.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

from hookgrad._backend import cuda_available
from hookgrad.cuda import amp, nvtx

__all__ = [
    "is_available", "device_count", "manual_seed", "manual_seed_all", "seed", "seed_all",
    "current_device", "set_device", "get_device_name", "get_device_capability",
    "get_device_properties", "synchronize", "empty_cache", "memory_allocated",
    "max_memory_allocated", "memory_reserved", "max_memory_reserved", "reset_peak_memory_stats",
    "initial_seed", "get_rng_state", "set_rng_state", "get_rng_state_all", "set_rng_state_all",
    "is_initialized", "init", "is_bf16_supported", "current_stream", "default_stream",
    "memory_stats", "memory_summary", "stream", "device", "device_of", "Stream", "Event",
    "OutOfMemoryError", "amp", "nvtx",
]

_NOT_COMPILED = "Torch not compiled with CUDA enabled"


class OutOfMemoryError(RuntimeError):
    """Mirrors: ``torch.cuda.OutOfMemoryError``."""


def _lazy_init() -> None:
    raise AssertionError(_NOT_COMPILED)


def _is_compiled() -> bool:
    return False


def is_available() -> bool:
    """Whether a CUDA device can be used. Mirrors: ``torch.cuda.is_available``."""
    return cuda_available()


def device_count() -> int:
    """Number of CUDA devices (0 without CuPy). Mirrors: ``torch.cuda.device_count``."""
    if not cuda_available():
        return 0
    import cupy  # type: ignore[import-not-found]  # pragma: no cover - GPU machines only

    return int(cupy.cuda.runtime.getDeviceCount())  # pragma: no cover


def manual_seed(seed: int) -> None:
    """Seed the CUDA generators (nothing to seed without a GPU). Mirrors: ``torch.cuda.manual_seed``."""


def manual_seed_all(seed: int) -> None:
    """Seed every CUDA generator. Mirrors: ``torch.cuda.manual_seed_all``."""


def seed() -> None:
    """Mirrors: ``torch.cuda.seed`` (no GPU generator to reseed)."""


def seed_all() -> None:
    """Mirrors: ``torch.cuda.seed_all``."""


def _needs_device(name: str) -> Any:
    def fn(*args: Any, **kwargs: Any) -> Any:
        _lazy_init()
    fn.__name__ = name
    fn.__doc__ = f"Raises AssertionError without CUDA. Mirrors: ``torch.cuda.{name}``."
    return fn


current_device = _needs_device("current_device")
get_device_name = _needs_device("get_device_name")
get_device_capability = _needs_device("get_device_capability")
get_device_properties = _needs_device("get_device_properties")
synchronize = _needs_device("synchronize")
initial_seed = _needs_device("initial_seed")
get_rng_state = _needs_device("get_rng_state")
init = _needs_device("init")
current_stream = _needs_device("current_stream")
default_stream = _needs_device("default_stream")


def set_device(device: Any) -> None:
    """Selecting a CUDA device fails without CUDA. Mirrors: ``torch.cuda.set_device``."""
    if device is not None and (not isinstance(device, int) or device >= 0):
        # a CPU build of PyTorch lacks the binding itself
        raise AttributeError("module 'torch._C' has no attribute '_cuda_setDevice'")


def empty_cache() -> None:
    """Nothing cached without a GPU. Mirrors: ``torch.cuda.empty_cache``."""


def memory_allocated(device: Any = None) -> int:
    """0 bytes. Mirrors: ``torch.cuda.memory_allocated``."""
    return 0


max_memory_allocated = memory_reserved = max_memory_reserved = memory_allocated


def reset_peak_memory_stats(device: Any = None) -> None:
    """Mirrors: ``torch.cuda.reset_peak_memory_stats`` (nothing to reset)."""


def memory_stats(device: Any = None) -> OrderedDict:
    """An empty dict, as PyTorch returns before CUDA initialises. Mirrors: ``torch.cuda.memory_stats``."""
    return OrderedDict()


def memory_summary(device: Any = None, abbreviated: bool = False) -> str:
    """No allocator statistics exist. Mirrors: ``torch.cuda.memory_summary``."""
    raise KeyError("allocated_bytes.all.current")


def set_rng_state(new_state: Any, device: Any = "cuda") -> None:
    """Ignored without CUDA (PyTorch queues it for a lazy init). Mirrors: ``torch.cuda.set_rng_state``."""


def get_rng_state_all() -> list:
    """One state per device: none. Mirrors: ``torch.cuda.get_rng_state_all``."""
    return []


def set_rng_state_all(new_states: Any) -> None:
    """Mirrors: ``torch.cuda.set_rng_state_all``."""


def is_initialized() -> bool:
    """Mirrors: ``torch.cuda.is_initialized``."""
    return False


def is_bf16_supported(including_emulation: bool = True) -> bool:
    """Mirrors: ``torch.cuda.is_bf16_supported``."""
    return False


class device:
    """Context manager selecting a CUDA device (only ``None`` or a negative index work).

    Mirrors: ``torch.cuda.device``.
    """

    def __init__(self, device: Any) -> None:
        self.idx = -1 if device is None else getattr(device, "index", device)

    def __enter__(self) -> None:
        if self.idx is not None and self.idx >= 0:
            raise RuntimeError("PyTorch was compiled without CUDA support")

    def __exit__(self, *exc: Any) -> bool:
        return False


class device_of(device):
    """``device`` of a tensor's device (a no-op for CPU tensors). Mirrors: ``torch.cuda.device_of``."""

    def __init__(self, obj: Any) -> None:
        super().__init__(-1)


class StreamContext:
    """Context selecting a CUDA stream; ``None`` is a no-op, any stream needs CUDA.

    Mirrors: ``torch.cuda.StreamContext``.
    """

    def __init__(self, stream: Any) -> None:
        self.stream = stream

    def __enter__(self) -> None:
        if self.stream is not None:
            _lazy_init()

    def __exit__(self, *exc: Any) -> bool:
        return False


_StreamContext = StreamContext


def stream(stream: Any) -> StreamContext:
    """Context selecting a stream (``None`` is a no-op). Mirrors: ``torch.cuda.stream``."""
    return StreamContext(stream)


class Stream:
    """Mirrors: ``torch.cuda.Stream`` (needs CUDA)."""

    def __new__(cls, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("torch.cuda.Stream requires CUDA support")


class Event:
    """Mirrors: ``torch.cuda.Event`` (needs CUDA)."""

    def __new__(cls, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("Tried to instantiate dummy base class Event")


# CUDA graphs (issue 21: transformers annotates with torch.cuda.CUDAGraph at import time)
from hookgrad.cuda import graphs  # noqa: E402
from hookgrad.cuda.graphs import (  # noqa: E402
    CUDAGraph,
    graph,
    graph_pool_handle,
    is_current_stream_capturing,
    make_graphed_callables,
)

__all__ += ["graphs", "CUDAGraph", "graph", "graph_pool_handle", "is_current_stream_capturing",
            "make_graphed_callables"]

mem_get_info = _needs_device("mem_get_info")
default_generators: tuple = ()  # one per CUDA device: none on a CPU build
__all__ += ["StreamContext", "mem_get_info", "default_generators"]
