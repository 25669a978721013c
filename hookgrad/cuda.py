"""``hookgrad.cuda``: what scripts ask before choosing a device.

Mirrors: ``torch.cuda`` (the availability queries). The CuPy backend behind the array-namespace
seam of `hookgrad._backend` is not built yet, so ``is_available()`` is True only where CuPy
finds a GPU, and tensors stay on the CPU.
"""

from __future__ import annotations

from hookgrad._backend import cuda_available

__all__ = ["is_available", "device_count", "manual_seed", "manual_seed_all"]


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
