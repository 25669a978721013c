"""How PyTorch's optimizers pick their implementation (``foreach``, ``fused``, ``capturable``),
exposed because third-party optimizers (timm's, among others) call the same helpers to decide.

Mirrors: ``torch.optim.optimizer._default_to_fused_or_foreach``,
``torch.optim.optimizer._get_capturable_supported_devices``.
"""

from __future__ import annotations

from typing import Any

from hookgrad.utils._foreach_utils import (_get_foreach_kernels_supported_devices,
                                           _get_fused_kernels_supported_devices,
                                           foreach_supported_type)

__all__ = ["_default_to_fused_or_foreach", "_get_capturable_supported_devices"]


def _default_to_fused_or_foreach(params: list, differentiable: bool,
                                 use_fused: bool = False) -> tuple[bool, bool]:
    """(fused, foreach) defaults for `params`: fused when asked and every parameter is a
    floating tensor on a fused-kernel device; else foreach when every parameter is on a
    foreach-kernel device (never the CPU); neither for ``differentiable`` optimizers."""
    if differentiable:
        return False, False
    fused_devices = _get_fused_kernels_supported_devices()
    foreach_devices = _get_foreach_kernels_supported_devices()
    fused = use_fused and all(p is None or (foreach_supported_type(p) and p.device.type in fused_devices
                                            and p.is_floating_point()) for p in params)
    foreach = not fused and all(p is None or (foreach_supported_type(p) and p.device.type in foreach_devices)
                                for p in params)
    return fused, foreach


def _get_capturable_supported_devices(supports_xla: bool = True) -> list[str]:
    """Devices whose optimizer steps can run inside a CUDA graph (``capturable=True``)."""
    devices = ["cuda", "xpu", "hpu", "privateuseone"]
    return [*devices, "xla"] if supports_xla else devices
