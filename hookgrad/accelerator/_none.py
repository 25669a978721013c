"""The error every accelerator call that needs a device raises on a CPU-only machine."""

from __future__ import annotations

from typing import Any, Callable

NO_DEVICE = "Cannot access accelerator device when none is available."


def no_device(name: str) -> Callable:
    def fn(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError(NO_DEVICE)
    fn.__name__ = name
    fn.__doc__ = f"Raises RuntimeError (no accelerator). Mirrors: ``torch.accelerator.{name}``."
    return fn
