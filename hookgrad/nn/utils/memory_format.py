"""Convert convolution weights to a memory format. Mirrors: ``torch.nn.utils.memory_format``."""

from __future__ import annotations

from typing import Any

from hookgrad.nn.modules.conv import Conv2d, ConvTranspose2d
from hookgrad.nn.modules.conv3d import Conv3d, ConvTranspose3d
from hookgrad.nn.modules.module import Module

__all__ = ["convert_conv2d_weight_memory_format", "convert_conv3d_weight_memory_format"]


def _convert(module: Module, memory_format: Any, types: tuple) -> Module:
    if isinstance(module, types):
        module.weight.data = module.weight.detach().clone(  # type: ignore[union-attr]
            memory_format=memory_format)
    for child in module.children():
        _convert(child, memory_format, types)
    return module


def convert_conv2d_weight_memory_format(module: Module, memory_format: Any) -> Module:
    """Give the weight of every ``Conv2d``/``ConvTranspose2d`` in `module` the layout
    `memory_format` (e.g. ``channels_last``), in place; returns `module`.

    Mirrors: ``torch.nn.utils.convert_conv2d_weight_memory_format``.
    """
    return _convert(module, memory_format, (Conv2d, ConvTranspose2d))


def convert_conv3d_weight_memory_format(module: Module, memory_format: Any) -> Module:
    """The 3-d form (``channels_last_3d``). Mirrors:
    ``torch.nn.utils.convert_conv3d_weight_memory_format``."""
    return _convert(module, memory_format, (Conv3d, ConvTranspose3d))
