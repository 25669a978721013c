"""`emit_nvtx`: NVTX ranges for each autograd operation (a CUDA profiling aid).

Mirrors: ``torch.autograd.profiler.emit_nvtx``. NVTX needs CUDA, which hookgrad has not:
entering an enabled `emit_nvtx` raises PyTorch's ``AssertionError`` of a build without CUDA; a
disabled one does nothing, as in PyTorch.
"""

from __future__ import annotations

from typing import Any

__all__ = ["emit_nvtx"]


class emit_nvtx:  # noqa: N801 - PyTorch's name
    """Context manager emitting an NVTX range per operation (needs CUDA; see module docstring).

    Example:
        >>> with emit_nvtx(enabled=False):
        ...     pass

    Mirrors: ``torch.autograd.profiler.emit_nvtx``.
    """

    def __init__(self, enabled: bool = True, record_shapes: bool = False) -> None:
        self.enabled = enabled
        self.entered = False
        self.record_shapes = record_shapes

    def __enter__(self) -> emit_nvtx:
        if not self.enabled:
            return self
        if self.entered:
            raise RuntimeError("NVTX annotation context manager is not reentrant")
        raise AssertionError("Torch not compiled with CUDA enabled")

    def __exit__(self, *exc: Any) -> bool:
        return False
