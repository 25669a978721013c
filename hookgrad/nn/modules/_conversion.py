"""Argument parsing for ``Module.to`` (PyTorch's ``torch._C._nn._parse_to``)."""

from __future__ import annotations

import functools
import inspect
import warnings
from collections.abc import Callable
from typing import Any

from hookgrad._backend import backend_for
from hookgrad._backend import device as _device
from hookgrad._dtypes import dtype as _dtype
from hookgrad._dtypes import to_dtype
from hookgrad._functional._to_args import check_one_dtype, check_to_kwargs
from hookgrad._tensor import Tensor

__all__ = ["parse_to", "with_factory_device"]


def _device_arg(dev: Any) -> _device:
    d = dev if isinstance(dev, _device) else _device(dev)
    backend_for(d, copy=True)  # PyTorch's error for a device that is not available
    return d


def parse_to(args: tuple, kwargs: dict) -> tuple[_device | None, _dtype | None]:
    """The ``(device, dtype)`` ``Module.to(...)`` asks for (``None``: keep).

    Raises:
        TypeError: for a dtype that is not floating point.
        RuntimeError: for a device that is not available.
    """
    check_to_kwargs(kwargs)
    dtype = kwargs.get("dtype")
    dev = _device_arg(kwargs["device"]) if kwargs.get("device") is not None else None
    for a in args:
        if isinstance(a, Tensor):
            dtype, dev = a.dtype, a.device
        elif isinstance(a, (str, _device)):
            dev = _device_arg(a)
        elif isinstance(a, bool):  # non_blocking
            continue
        elif isinstance(a, int):  # an accelerator index
            dev = _device_arg(a)
        elif isinstance(a, (dict, list, set)):
            raise TypeError("to() received an invalid combination of arguments - got "
                            f"({type(a).__name__}), but expected a device, dtype or tensor")
        elif a is not None:
            check_one_dtype(dtype)
            # PyTorch's parser reads a Python float where a dtype goes as Python's float type
            dtype = float if isinstance(a, float) else a
    if dtype is None:
        return dev, None
    d = to_dtype(dtype)
    if not (d.is_floating_point or d.is_complex):
        raise TypeError(
            "nn.Module.to only accepts floating point or complex dtypes, but got desired "
            f"dtype={d}"
        )
    if d.is_complex:
        warnings.warn(
            "Complex modules are a new feature under active development whose design may "
            "change, and some modules might not work as expected when using complex tensors as "
            "parameters or buffers. Please file an issue at https://github.com/pytorch/pytorch/"
            "issues/new?template=bug-report.yml if a complex module does not work as expected.",
            UserWarning, stacklevel=3)
    return dev, d


def with_factory_device(cls: type) -> None:
    """Make ``device=`` of a hookgrad module's constructor the factories' default device while
    the constructor runs (``nn.Linear(2, 3, device="meta")``).

    PyTorch's modules pass their ``factory_kwargs`` to every ``torch.empty`` they call; running
    the constructor under ``with device(...)`` does the same for all of hookgrad's modules at
    once, initialisation included, without threading ``device`` through each of them.
    """
    init = cls.__dict__.get("__init__")
    if init is None or not cls.__module__.startswith("hookgrad.") or getattr(
            init, "_factory_device", False):
        return
    try:
        params = list(inspect.signature(init).parameters.values())
    except (TypeError, ValueError):  # pragma: no cover - no signature to read
        return
    names = [p.name for p in params]
    if "device" not in names:
        return
    kind = params[names.index("device")].kind
    # where ``device`` sits among the positional arguments after ``self`` (None: keyword only)
    at = names.index("device") - 1 if kind is inspect.Parameter.POSITIONAL_OR_KEYWORD else None
    cls.__init__ = _under_device(init, at)  # type: ignore[misc]


def _under_device(init: Callable[..., None], at: int | None) -> Callable[..., None]:
    @functools.wraps(init)
    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        dev = kwargs.get("device")
        if dev is None and at is not None and len(args) > at:
            dev = args[at]
        if dev is None:
            init(self, *args, **kwargs)
            return
        with _device_arg(dev):
            init(self, *args, **kwargs)
    __init__._factory_device = True  # type: ignore[attr-defined]
    return __init__
