"""Build information. Mirrors: ``torch.version`` (as a CPU-only build of PyTorch 2.13 reports).

Libraries read ``torch.version.cuda`` / ``torch.version.hip`` to pick code paths; hookgrad has
no CUDA or ROCm build, so both are None, as on a CPU wheel of PyTorch.

Example:
    >>> import hookgrad
    >>> hookgrad.version.__version__, hookgrad.version.cuda
    ('2.13.0', None)
"""

from __future__ import annotations

__all__ = ["__version__", "debug", "cuda", "git_version", "hip", "rocm", "xpu"]

__version__ = "2.13.0"
debug = False
cuda: str | None = None
git_version = "Unknown"  # hookgrad is not built from PyTorch's repository
hip: str | None = None
rocm: str | None = None
xpu: str | None = None
