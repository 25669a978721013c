"""Mirrors: ``torch.nn.utils.init`` (``skip_init``)."""

from __future__ import annotations

import inspect
from typing import Any

__all__ = ["skip_init"]


def skip_init(module_cls: type, *args: Any, **kwargs: Any) -> Any:
    """Build a module whose parameters need not be initialised.

    PyTorch builds it on the meta device and allocates uninitialised storage; hookgrad builds it
    normally (initialised values are one valid content of uninitialised memory).

    Mirrors: ``torch.nn.utils.skip_init``.
    """
    if not issubclass(module_cls, _module_base()):
        raise RuntimeError(f"Expected a Module; got {module_cls}")
    if "device" not in inspect.signature(module_cls).parameters:
        raise RuntimeError("Module must support a 'device' arg to skip initialization")
    kwargs.pop("device", None)
    return module_cls(*args, **kwargs)


def _module_base() -> type:
    from hookgrad.nn.modules.module import Module
    return Module
