"""Mirrors: ``torch.nn.parallel.comm``: collectives between the accelerators of one process.

Every function moves data between accelerator devices; PyTorch's CPU build has no kernels for
them and refuses CPU inputs, as hookgrad does (with PyTorch's error types).
"""

from __future__ import annotations

from typing import Any

__all__ = ["broadcast", "broadcast_coalesced", "reduce_add", "reduce_add_coalesced", "scatter",
           "gather"]


def _no_kernel(name: str) -> AttributeError:
    return AttributeError(f"module 'torch._C' has no attribute '_{name}'")


def broadcast(tensor: Any, devices: Any = None, *, out: Any = None) -> Any:
    """Mirrors: ``torch.nn.parallel.comm.broadcast``."""
    if (devices is None) == (out is None):
        raise RuntimeError("Exactly one of 'devices' and 'out' must be specified, but got "
                           f"devices={devices} and out={out}")
    raise _no_kernel("broadcast")


def broadcast_coalesced(tensors: Any, devices: Any, buffer_size: int = 10485760) -> Any:
    """Mirrors: ``torch.nn.parallel.comm.broadcast_coalesced``."""
    raise _no_kernel("broadcast_coalesced")


def reduce_add(inputs: Any, destination: Any = None) -> Any:
    """Mirrors: ``torch.nn.parallel.comm.reduce_add`` (inputs must be on accelerators)."""
    for i, t in enumerate(inputs):
        if getattr(getattr(t, "device", None), "type", "cpu") == "cpu":
            raise AssertionError(f"reduce_add expects all inputs to be on GPUs, but input {i} "
                                 "is on CPU")
    raise _no_kernel("reduce_add")


def reduce_add_coalesced(inputs: Any, destination: Any = None,
                         buffer_size: int = 10485760) -> Any:
    """Mirrors: ``torch.nn.parallel.comm.reduce_add_coalesced``."""
    return [reduce_add(group, destination) for group in zip(*inputs)]


def scatter(tensor: Any, devices: Any = None, chunk_sizes: Any = None, dim: int = 0,
            streams: Any = None, *, out: Any = None) -> Any:
    """Mirrors: ``torch.nn.parallel.comm.scatter``."""
    raise _no_kernel("scatter")


def gather(tensors: Any, dim: int = 0, destination: Any = None, *, out: Any = None) -> Any:
    """Mirrors: ``torch.nn.parallel.comm.gather``."""
    raise _no_kernel("gather")
