"""Switches for the warnings about pre-0.2 broadcasting and ``keepdim`` behaviour.

Mirrors: ``torch.utils.backcompat``. Both warnings are off by default and PyTorch no longer
emits them from any operator; the switches only keep their state, as in PyTorch.
"""

from __future__ import annotations

__all__ = ["Warning", "broadcast_warning", "keepdim_warning"]

_STATE = {"broadcast": False, "keepdim": False}


class Warning:  # noqa: A001 - PyTorch's name
    """An on/off switch read and written through ``enabled``.
    Mirrors: ``torch.utils.backcompat.Warning``."""

    def __init__(self, setter, getter) -> None:  # noqa: ANN001 - PyTorch's signature
        self.setter = setter
        self.getter = getter

    def set_enabled(self, value: bool) -> None:
        self.setter(value)

    def get_enabled(self) -> bool:
        return self.getter()

    enabled = property(get_enabled, set_enabled)


def _switch(key: str) -> Warning:
    def setter(value: bool) -> None:
        if not isinstance(value, bool):
            raise TypeError(f"enabled must be a bool, not {type(value).__name__}")
        _STATE[key] = value

    return Warning(setter, lambda: _STATE[key])


broadcast_warning = _switch("broadcast")
keepdim_warning = _switch("keepdim")
