"""Scaled-dot-product-attention backend selection. Mirrors: ``torch.nn.attention``.

The backend switches live here (``torch.backends.cuda`` reads and sets the same ones, as both
read ATen's global context in PyTorch). hookgrad has one attention kernel, the math one, which
stands in for every backend PyTorch's CPU build can run: the math and flash backends. With
neither enabled, `scaled_dot_product_attention` raises PyTorch's "No viable backend"
RuntimeError, as the CPU build does. The flash-attention implementation registry works as
PyTorch's; it starts empty here (PyTorch pre-registers its CUDA-only FA3/FA4).
"""

from __future__ import annotations

import contextlib
import enum
import logging
from collections.abc import Callable, Iterable, Iterator
from typing import Any

__all__ = ["SDPBackend", "sdpa_kernel", "WARN_FOR_UNFUSED_KERNELS",
           "register_flash_attention_impl", "activate_flash_attention_impl",
           "list_flash_attention_impls", "current_flash_attention_impl",
           "restore_flash_attention_impl"]

logger = logging.getLogger(__name__)
WARN_FOR_UNFUSED_KERNELS = False


class SDPBackend(enum.IntEnum):
    """The attention kernels. Mirrors: ``torch.nn.attention.SDPBackend``."""

    ERROR = -1
    MATH = 0
    FLASH_ATTENTION = 1
    EFFICIENT_ATTENTION = 2
    CUDNN_ATTENTION = 3
    OVERRIDEABLE = 4


# switch name -> enabled (ATen's globalContext sdp flags; "fp16_math" is the reduction switch)
SDP_ENABLED = {"flash": True, "mem_efficient": True, "math": True, "cudnn": True,
               "overrideable": True, "fp16_math": False}
_backend_names = {"cudnn": "CUDNN_ATTENTION", "flash": "FLASH_ATTENTION",
                  "mem_efficient": "EFFICIENT_ATTENTION", "math": "MATH",
                  "overrideable": "OVERRIDEABLE"}
_PRIORITY = [1, 2, 0, 3, 4]  # ATen's default order: flash, efficient, math, cudnn, overrideable


def viable_on_cpu() -> bool:
    """Whether a backend the CPU build can run (math or flash) is enabled."""
    return SDP_ENABLED["math"] or SDP_ENABLED["flash"]


def _cur_sdpa_kernel_backends(with_priority: bool = False) -> list:
    backends = [SDPBackend[val] for name, val in _backend_names.items() if SDP_ENABLED[name]]
    if with_priority:
        backends.sort(key=lambda b: _PRIORITY.index(int(b)))
    return backends


def _sdpa_kernel(backends: Iterable, set_priority: bool = False) -> None:
    backends = list(backends)
    for name, val in _backend_names.items():
        SDP_ENABLED[name] = SDPBackend[val] in backends
    if set_priority:
        order = [int(b) for b in backends]
        order += [p for p in _PRIORITY if p not in order]
        _PRIORITY[:] = order


@contextlib.contextmanager
def sdpa_kernel(backends: Any, set_priority: bool = False) -> Iterator[dict]:
    """Enable only `backends` (one or a list) inside the block; restore the switches after.

    Mirrors: ``torch.nn.attention.sdpa_kernel``.
    """
    if not isinstance(backends, (list, SDPBackend)):
        raise AssertionError("Backend must be an instance of SDPBackend or a list of SDPBackend "
                             f"instances, got {type(backends).__name__}")
    if isinstance(backends, SDPBackend):
        backends = [backends]
    backends = list(dict.fromkeys(backends))
    previous = _cur_sdpa_kernel_backends(with_priority=set_priority)
    try:
        _sdpa_kernel(backends, set_priority)
        yield {}
    finally:
        _sdpa_kernel(previous, set_priority)


# ---------------------------------------------------------------- flash-attention impl registry
_FLASH_ATTENTION_IMPLS: dict[str, Callable[..., Any]] = {}
_FLASH_ATTENTION_ACTIVE: tuple | None = None


def register_flash_attention_impl(impl: str, *, register_fn: Callable[..., Any]) -> None:
    """Record the callable that activates implementation `impl`.

    Mirrors: ``torch.nn.attention.register_flash_attention_impl``.
    """
    _FLASH_ATTENTION_IMPLS[impl] = register_fn


def activate_flash_attention_impl(impl: str) -> None:
    """Run `impl`'s registered callable and keep the handle it returns.

    Mirrors: ``torch.nn.attention.activate_flash_attention_impl``.
    """
    global _FLASH_ATTENTION_ACTIVE
    restore_flash_attention_impl(_raise_warn=False)
    register_fn = _FLASH_ATTENTION_IMPLS.get(impl)
    if register_fn is None:
        raise ValueError(f"Unknown flash attention impl '{impl}'. Available implementations: "
                         f"{list_flash_attention_impls()}")
    handle = register_fn()
    if handle is not None:
        _FLASH_ATTENTION_ACTIVE = (impl, handle)


def list_flash_attention_impls() -> list[str]:
    """Mirrors: ``torch.nn.attention.list_flash_attention_impls``."""
    return sorted(_FLASH_ATTENTION_IMPLS)


def current_flash_attention_impl() -> str | None:
    """Mirrors: ``torch.nn.attention.current_flash_attention_impl``."""
    return None if _FLASH_ATTENTION_ACTIVE is None else _FLASH_ATTENTION_ACTIVE[0]


def restore_flash_attention_impl(_raise_warn: bool = True) -> None:
    """Remove the active implementation's handle. Mirrors:
    ``torch.nn.attention.restore_flash_attention_impl``."""
    global _FLASH_ATTENTION_ACTIVE
    handle = None if _FLASH_ATTENTION_ACTIVE is None else _FLASH_ATTENTION_ACTIVE[1]
    if handle is not None:
        handle.remove()
    elif _raise_warn:
        logger.warning("Trying to restore default FA2 impl when no custom impl was activated")
    _FLASH_ATTENTION_ACTIVE = None
