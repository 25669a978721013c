"""Mirrors: ``torch.nn.parallel.parallel_apply``: one module per accelerator, in threads.

Without accelerators PyTorch refuses before starting a thread: an explicit CPU device is a
``ValueError``, no devices at all a ``RuntimeError``; hookgrad gives the same errors.
"""

from __future__ import annotations

from typing import Any

__all__ = ["get_a_var", "parallel_apply"]


def get_a_var(obj: Any) -> Any:
    """The first tensor found in a nested list/tuple/dict, or None.
    Mirrors: ``torch.nn.parallel.parallel_apply.get_a_var``."""
    from hookgrad._tensor import Tensor  # noqa: PLC0415 - keeps this module import-light

    if isinstance(obj, Tensor):
        return obj
    if isinstance(obj, (list, tuple)):
        for item in obj:
            found = get_a_var(item)
            if found is not None:
                return found
    if isinstance(obj, dict):
        for item in obj.items():
            found = get_a_var(item)
            if found is not None:
                return found
    return None


def parallel_apply(modules: Any, inputs: Any, kwargs_tup: Any = None,
                   devices: Any = None) -> list:
    """Apply each module to its input on its device. Mirrors:
    ``torch.nn.parallel.parallel_apply`` (PyTorch's errors on a CPU-only machine)."""
    if len(modules) != len(inputs):
        raise AssertionError(f"The number of modules {len(modules)} is not equal to the "
                             f"number of inputs {len(inputs)}")
    if devices is not None:
        for dev in devices:
            kind = getattr(dev, "type", dev if isinstance(dev, str) else "cuda")
            if str(kind).split(":")[0] == "cpu":
                raise ValueError("Expected a cuda device, but got: cpu")
    raise RuntimeError("Cannot access accelerator device when none is available.")
