"""``nn.Module.xpu``/``ipu``/``mtia``: move every parameter and buffer, as PyTorch's do.

Mirrors: ``torch.nn.Module.xpu``, ``ipu``, ``mtia``. Each is ``_apply`` of the tensor method of
the same name, which raises PyTorch's CPU-build error (`hookgrad._unsupported` rows); a module
without parameters or buffers is returned unchanged, as in PyTorch.
"""

from __future__ import annotations

from typing import Any

from hookgrad.nn.modules.module import Module

__all__ = ["install"]


def _mover(name: str) -> Any:
    def move(self: Module, device: Any = None) -> Module:
        return self._apply(lambda t: getattr(t, name)(device))

    move.__name__ = name
    move.__qualname__ = f"Module.{name}"
    move.__doc__ = (f"Move parameters and buffers with ``Tensor.{name}`` (raises on hookgrad "
                    f"once there is one). Mirrors: ``torch.nn.Module.{name}``.")
    return move


def install() -> None:
    """Set the three methods on `Module` (once; a real definition already there wins)."""
    for name in ("xpu", "ipu", "mtia"):
        if name not in vars(Module):
            setattr(Module, name, _mover(name))
