"""What the machine running the oracle changes in PyTorch's own results."""

from __future__ import annotations

import platform
from pathlib import Path


def pytorch_bernoulli_is_portable() -> bool:
    """False on Intel CPUs, where PyTorch's MKL build draws ``bernoulli_(p)`` (dropout masks)
    from MKL's own generator instead of its portable kernel, which hookgrad reproduces."""
    try:
        return "GenuineIntel" not in Path("/proc/cpuinfo").read_text()
    except OSError:
        return not platform.processor().startswith("Intel")
