"""Helpers PyTorch's optimizers and ``clip_grad`` use to batch tensors for ``_foreach_*`` ops.

Mirrors: ``torch.utils._foreach_utils``. hookgrad's ``_foreach_*`` functions loop over their
lists. As on PyTorch, CPU tensors have foreach support (``_device_has_foreach_support``) though
the CPU is not a foreach-kernel device (so optimizers do not default to ``foreach=True`` there),
and it is a fused-kernel device.
"""

from __future__ import annotations

from typing import Any

__all__ = ["_group_tensors_by_device_and_dtype", "_has_foreach_support",
           "_device_has_foreach_support", "_get_foreach_kernels_supported_devices",
           "_get_fused_kernels_supported_devices"]


def _get_foreach_kernels_supported_devices() -> list[str]:
    """Mirrors: ``torch.utils._foreach_utils._get_foreach_kernels_supported_devices``."""
    return ["cuda", "xpu", "mtia", "privateuseone"]


def _get_fused_kernels_supported_devices() -> list[str]:
    """Mirrors: ``torch.utils._foreach_utils._get_fused_kernels_supported_devices``."""
    return ["mps", "cuda", "xpu", "hpu", "cpu", "mtia", "privateuseone"]


def _device_has_foreach_support(device: Any) -> bool:
    """Mirrors: ``torch.utils._foreach_utils._device_has_foreach_support``."""
    return device.type in [*_get_foreach_kernels_supported_devices(), "cpu"]


def foreach_supported_type(t: Any) -> bool:
    """Exactly a Tensor, Parameter or Buffer (PyTorch's ``_foreach_supported_types``: no
    other subclass takes the multi-tensor paths)."""
    return type(t).__name__ in ("Tensor", "Parameter", "Buffer")


def _has_foreach_support(tensors: Any, device: Any) -> bool:
    """Mirrors: ``torch.utils._foreach_utils._has_foreach_support``."""
    return _device_has_foreach_support(device) and all(
        t is None or foreach_supported_type(t) for t in tensors)


def _group_tensors_by_device_and_dtype(tensorlistlist: Any, with_indices: bool = False) -> dict:
    """Group position i of every list by the (device, dtype) of the first list's tensor i.

    Mirrors: ``torch.utils._foreach_utils._group_tensors_by_device_and_dtype``.
    """
    first = tensorlistlist[0]
    for i, t in enumerate(first):
        if t is None:
            raise RuntimeError("Tensors of the first list of nested Tensor lists are supposed "
                               f"to be defined but the {i}-th Tensor is not.")
    groups: dict = {}
    for i, t in enumerate(first):
        key = (t.device, t.dtype)
        lists, indices = groups.setdefault(key, ([[] for _ in tensorlistlist], []))
        for out, src in zip(lists, tensorlistlist):
            out.append(src[i])
        if with_indices:
            indices.append(i)
    return groups
