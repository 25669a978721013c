"""Mirrors: ``torch.nn.parallel.replicate``: copies of a module on other accelerators.

Replicas are made by broadcasting parameters to the target devices, which PyTorch implements
for accelerator tensors only; on CPU it refuses with the errors hookgrad gives here.
"""

from __future__ import annotations

from typing import Any

__all__ = ["replicate"]


def replicate(network: Any, devices: Any, detach: bool = False) -> list:
    """Mirrors: ``torch.nn.parallel.replicate`` (PyTorch's errors for CPU targets)."""
    for dev in devices:
        if getattr(dev, "type", dev if isinstance(dev, str) else None) == "cpu":
            raise ValueError("Expected a non cpu device, but got: cpu")
    raise AssertionError("Broadcast function not implemented for CPU tensors")
