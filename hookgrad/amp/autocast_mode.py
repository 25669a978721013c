"""Autocast on a machine without CUDA: the state PyTorch keeps, and ``autocast`` itself.

Mirrors: ``torch.amp.autocast_mode``. ``autocast("cuda")`` without CUDA warns and disables
itself, as PyTorch's does. ``autocast("cpu")`` (bfloat16 by default, float16 on request) casts
the inputs of the listed primitives by PyTorch's CPU policy (NOTE [CPU autocast policy] in
`hookgrad.amp._cpu_policy`).
"""

from __future__ import annotations

import collections.abc
import functools
import warnings
from typing import Any, Callable

import numpy as np

from hookgrad._backend import cuda_available
from hookgrad._dtypes import bfloat16, float16, float64
from hookgrad._tensor import Tensor
from hookgrad.amp import _cpu_policy

__all__ = ["autocast", "is_autocast_available", "custom_fwd", "custom_bwd"]

_DEFAULT_DTYPES = {"cpu": bfloat16, "cuda": float16, "xpu": bfloat16, "ipu": float16,
                   "xla": bfloat16, "hpu": bfloat16, "mps": float16, "mtia": bfloat16}
STATE: dict[str, Any] = {"enabled": {}, "dtype": dict(_DEFAULT_DTYPES), "cache": True,
                         "nesting": 0}
_CPU_DTYPES = (bfloat16, float16)  # what PyTorch's CPU autocast accepts


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
    """Record the autocast switch for `device_type`; for "cpu" it switches the casting on."""
    STATE["enabled"][device_type] = bool(enabled)
    if device_type == "cpu":
        sync_cpu()


def sync_cpu() -> None:
    """Hand the CPU autocast state (switch, dtype, cache flag) to the casting policy."""
    _cpu_policy.activate(STATE["enabled"].get("cpu", False), STATE["dtype"]["cpu"],
                         STATE["cache"])


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
        elif enabled and device_type == "cpu" and self.fast_dtype not in _CPU_DTYPES:
            warnings.warn("In CPU autocast, but the target dtype is not supported. Disabling "
                          "autocast.\nCPU Autocast only supports dtypes of torch.bfloat16, "
                          "torch.float16 currently.", UserWarning, stacklevel=2)
            self._enabled = False
        self._cache = STATE["cache"] if cache_enabled is None else bool(cache_enabled)

    def __enter__(self) -> autocast:
        self.prev = STATE["enabled"].get(self.device, False)
        self.prev_dtype = STATE["dtype"][self.device]
        self.prev_cache = STATE["cache"]
        STATE["dtype"][self.device] = self.fast_dtype
        STATE["cache"] = self._cache
        set_enabled(self.device, self._enabled)
        STATE["nesting"] += 1
        return self

    def __exit__(self, *exc: Any) -> bool:
        STATE["nesting"] -= 1
        if STATE["nesting"] == 0:  # leaving the outermost region drops the cached casts
            _cpu_policy.clear_cache()
        STATE["dtype"][self.device] = self.prev_dtype
        STATE["cache"] = self.prev_cache
        set_enabled(self.device, self.prev)
        return False

    def __call__(self, func: Callable) -> Callable:
        @functools.wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with self:
                return func(*args, **kwargs)
        return wrapper


def custom_fwd(fwd: Callable | None = None, *, device_type: str, cast_inputs: Any = None) -> Any:
    """Decorator for a custom Function's forward. Without `cast_inputs` the forward runs in
    the caller's autocast state; with it, inside an enabled autocast region, the floating
    inputs are cast to `cast_inputs` and the forward runs with autocast off. The state is
    recorded on ``ctx`` for `custom_bwd`.

    Mirrors: ``torch.amp.custom_fwd``.
    """
    _check_device(device_type)
    if fwd is None:
        return functools.partial(custom_fwd, device_type=device_type, cast_inputs=cast_inputs)

    @functools.wraps(fwd)
    def decorate_fwd(*args: Any, **kwargs: Any) -> Any:
        ctx = args[0]
        ctx._dtype = STATE["dtype"][device_type]
        enabled = STATE["enabled"].get(device_type, False)
        if cast_inputs is None:
            ctx._fwd_used_autocast = enabled
            return fwd(*args, **kwargs)
        ctx._fwd_used_autocast = False
        if not enabled:
            return fwd(*args, **kwargs)
        with autocast(device_type=device_type, enabled=False):
            return fwd(*_cast(args, device_type, cast_inputs),
                       **_cast(kwargs, device_type, cast_inputs))
    return decorate_fwd


def custom_bwd(bwd: Callable | None = None, *, device_type: str) -> Any:
    """Decorator for a custom Function's backward: it runs in the autocast state its forward
    ran in (as `custom_fwd` recorded it).

    Mirrors: ``torch.amp.custom_bwd``.
    """
    _check_device(device_type)
    if bwd is None:
        return functools.partial(custom_bwd, device_type=device_type)

    @functools.wraps(bwd)
    def decorate_bwd(*args: Any, **kwargs: Any) -> Any:
        ctx = args[0]
        with autocast(device_type=device_type, enabled=getattr(ctx, "_fwd_used_autocast", False),
                      dtype=getattr(ctx, "_dtype", None)):
            return bwd(*args, **kwargs)
    return decorate_bwd
