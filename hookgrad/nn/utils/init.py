"""Mirrors: ``torch.nn.utils.init`` (``skip_init``)."""

from __future__ import annotations

import inspect
from typing import Any

__all__ = ["skip_init"]


def skip_init(module_cls: type, *args: Any, **kwargs: Any) -> Any:
    """Build a module whose parameters need not be initialised.

    Built on the meta device (no initialisation runs, no random numbers are drawn), then given
    uninitialised storage on the device asked for (``to_empty``), as PyTorch does.

    Mirrors: ``torch.nn.utils.skip_init``.
    """
    if not issubclass(module_cls, _module_base()):
        raise RuntimeError(f"Expected a Module; got {module_cls}")
    if "device" not in inspect.signature(module_cls).parameters:
        raise RuntimeError("Module must support a 'device' arg to skip initialization")
    final_device = kwargs.pop("device", "cpu")
    kwargs["device"] = "meta"
    return module_cls(*args, **kwargs).to_empty(device=final_device)


def _module_base() -> type:
    from hookgrad.nn.modules.module import Module
    return Module
