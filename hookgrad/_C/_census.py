"""More ``torch._C`` names tools reach for (issue 21's census): API-usage logging, the
torch-function switches, the cuDNN flag, base classes and the linear-algebra error type.

Mirrors: ``torch._C`` (``_log_api_usage_once``, ``_is_torch_function_enabled``,
``DisableTorchFunction``, ``_get_cudnn_enabled``, ``_LinAlgError``, ``TensorBase``, ...).
"""

from __future__ import annotations

import types
from typing import Any

from hookgrad._functional.linalg_decomp import LinAlgError as _LinAlgError
from hookgrad._functional.random import Generator
from hookgrad._tensor import Tensor
from hookgrad._function_mode import (  # real switches: they turn TorchFunctionMode dispatch off
    DisableTorchFunction,
    DisableTorchFunctionSubclass,
    _is_torch_function_enabled,
)
from hookgrad.autograd.function import Function as _FunctionBase
from hookgrad.backends import cudnn as _cudnn
from hookgrad.nn.utils.rnn import pad_sequence as _pad_sequence

__all__ = ["_log_api_usage_once", "_is_torch_function_enabled", "_disabled_torch_function_impl",
           "DisableTorchFunction", "DisableTorchFunctionSubclass", "_get_cudnn_enabled",
           "_set_cudnn_enabled", "_get_default_device", "_get_privateuse1_backend_name",
           "_has_storage", "_LinAlgError", "Generator", "TensorBase", "_TensorBase",
           "_FunctionBase", "_nn"]

TensorBase = _TensorBase = Tensor


def _log_api_usage_once(event: str) -> None:
    """PyTorch reports API usage to an internal logger that is off by default: a no-op then."""


def _disabled_torch_function_impl(func: Any, types_: Any, args: Any = (),
                                  kwargs: Any = None) -> Any:
    """Call `func` without ``__torch_function__`` dispatch. Mirrors: ``torch._C._disabled_torch_function_impl``."""
    return func(*args, **(kwargs or {}))


def _get_cudnn_enabled() -> bool:
    """Mirrors: ``torch._C._get_cudnn_enabled`` (the ``backends.cudnn.enabled`` flag)."""
    return bool(_cudnn.enabled)


def _set_cudnn_enabled(value: bool) -> None:
    """Mirrors: ``torch._C._set_cudnn_enabled``."""
    _cudnn.enabled = bool(value)


def _get_default_device() -> str:
    """Mirrors: ``torch._C._get_default_device``."""
    return "cpu"


def _get_privateuse1_backend_name() -> str:
    """Mirrors: ``torch._C._get_privateuse1_backend_name``."""
    return "privateuseone"


def _has_storage(tensor: Tensor) -> bool:
    """Every hookgrad tensor owns (a view of) a storage. Mirrors: ``torch._C._has_storage``."""
    return isinstance(tensor, Tensor)


def _parse_to(*args: Any, **kwargs: Any) -> tuple:
    """(device, dtype, non_blocking, memory_format) of a ``Tensor.to`` call's arguments."""
    from hookgrad._backend import device as _device
    from hookgrad._dtypes import dtype as _dtype
    dev = dt = None
    for a in args:
        if isinstance(a, _dtype):
            dt = a
        elif isinstance(a, Tensor):
            dev, dt = a.device, a.dtype
        elif isinstance(a, (str, _device, int)):
            dev = _device(a) if not isinstance(a, int) else _device("cpu")
    dev = _device(kwargs["device"]) if kwargs.get("device") is not None else dev
    dt = kwargs.get("dtype", dt)
    return dev, dt, bool(kwargs.get("non_blocking", False)), kwargs.get("memory_format")


_nn = types.SimpleNamespace(pad_sequence=_pad_sequence, _parse_to=_parse_to)
