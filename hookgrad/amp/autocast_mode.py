"""Autocast on a machine without CUDA: the state PyTorch keeps, and ``autocast`` itself.

Mirrors: ``torch.amp.autocast_mode``. ``autocast("cuda")`` without CUDA warns and disables
itself, as PyTorch's does. CPU autocast (bfloat16 casting of matmul-like ops) is not implemented:
entering an enabled CPU autocast raises NotImplementedError instead of silently computing in
float32; a disabled one (``enabled=False``) is the usual no-op.
"""

from __future__ import annotations

import collections.abc
import functools
import warnings
from typing import Any, Callable

import numpy as np

from hookgrad._backend import cuda_available
from hookgrad._dtypes import float16, float64
from hookgrad._tensor import Tensor
from hookgrad._legacy import bfloat16

__all__ = ["autocast", "is_autocast_available", "custom_fwd", "custom_bwd"]

_DEFAULT_DTYPES = {"cpu": bfloat16, "cuda": float16, "xpu": bfloat16, "ipu": float16,
                   "xla": bfloat16, "hpu": bfloat16, "mps": float16, "mtia": bfloat16}
STATE: dict[str, Any] = {"enabled": {}, "dtype": dict(_DEFAULT_DTYPES), "cache": True,
                         "nesting": 0}
_CPU_MSG = ("hookgrad: CPU autocast (bfloat16 casting of matmul-like ops) is not implemented; "
            "use enabled=False or compute in float32")


def _cast(value: Any, device_type: str, dtype: Any) -> Any:
    """Cast every floating tensor of `device_type` inside `value` (nested containers included,
    float64 excepted) to `dtype`, as autocast casts a custom op's inputs.

    Mirrors: ``torch.amp.autocast_mode._cast``.
    """
    if isinstance(value, Tensor):
        eligible = (value.is_floating_point() and value.device.type == device_type
                    and value.dtype is not float64)
        return value.to(dtype) if eligible else value
    if isinstance(value, (str, bytes, np.ndarray)):
        return value
    if isinstance(value, collections.abc.Mapping):
        return {_cast(k, device_type, dtype): _cast(v, device_type, dtype)
                for k, v in value.items()}
    if isinstance(value, collections.abc.Iterable):
        items = (_cast(v, device_type, dtype) for v in value)
        return type(value)(items) if isinstance(value, (list, tuple)) else items
    return value


def is_autocast_available(device_type: str) -> bool:
    """Mirrors: ``torch.amp.is_autocast_available``."""
    return device_type in _DEFAULT_DTYPES


def _check_device(device_type: str) -> None:
    if not isinstance(device_type, str):
        raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
    if device_type not in _DEFAULT_DTYPES:
        raise RuntimeError(f"User specified an unsupported autocast device_type '{device_type}'")


def set_enabled(device_type: str, enabled: bool) -> None:
    """Record the autocast switch for `device_type` (CPU casting is not implemented)."""
    if device_type == "cpu" and enabled:
        raise NotImplementedError(_CPU_MSG)
    STATE["enabled"][device_type] = bool(enabled)


class autocast:
    """Context manager and decorator for mixed precision regions.

    Mirrors: ``torch.amp.autocast``.
    """

    def __init__(self, device_type: str, dtype: Any = None, enabled: bool = True,
                 cache_enabled: bool | None = None) -> None:
        _check_device(device_type)
        self.device = device_type
        self.fast_dtype = dtype if dtype is not None else STATE["dtype"][device_type]
        self._enabled = enabled
        if enabled and device_type == "cuda" and not cuda_available():
            warnings.warn("CUDA is not available or torch_xla is imported. Disabling autocast.",
                          UserWarning, stacklevel=2)
            self._enabled = False
        self._cache = cache_enabled

    def __enter__(self) -> autocast:
        self.prev = STATE["enabled"].get(self.device, False)
        self.prev_dtype = STATE["dtype"][self.device]
        set_enabled(self.device, self._enabled)
        STATE["dtype"][self.device] = self.fast_dtype
        STATE["nesting"] += 1
        return self

    def __exit__(self, *exc: Any) -> bool:
        STATE["nesting"] -= 1
        STATE["enabled"][self.device] = self.prev
        STATE["dtype"][self.device] = self.prev_dtype
        return False

    def __call__(self, func: Callable) -> Callable:
        @functools.wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with self:
                return func(*args, **kwargs)
        return wrapper


def custom_fwd(fwd: Callable | None = None, *, device_type: str, cast_inputs: Any = None) -> Any:
    """Decorator for a custom Function's forward; autocast never runs enabled here, so inputs
    pass through unchanged (what PyTorch does outside an autocast region).

    Mirrors: ``torch.amp.custom_fwd``.
    """
    _check_device(device_type)
    if fwd is None:
        return functools.partial(custom_fwd, device_type=device_type, cast_inputs=cast_inputs)
    return fwd


def custom_bwd(bwd: Callable | None = None, *, device_type: str) -> Any:
    """Decorator for a custom Function's backward (runs in the forward's autocast state).

    Mirrors: ``torch.amp.custom_bwd``.
    """
    _check_device(device_type)
    if bwd is None:
        return functools.partial(custom_bwd, device_type=device_type)
    return bwd
