"""Neural-network modules, functional ops, initialisers and utilities. Mirrors: ``torch.nn``."""

from __future__ import annotations

from hookgrad.nn import functional, init
from hookgrad.nn import modules
from hookgrad.nn import utils
from hookgrad.nn.modules import *  # noqa: F403
from hookgrad.nn.modules import __all__ as _modules_all
from hookgrad.nn.parameter import Buffer, Parameter, UninitializedBuffer, UninitializedParameter
from hookgrad.nn.modules.data_parallel import DataParallel  # torch.nn.DataParallel
from hookgrad.nn import attention, common_types, grad  # noqa: E402


def factory_kwargs(kwargs: dict | None) -> dict:
    """Merge ``device``/``dtype``/``memory_format`` and a nested ``factory_kwargs`` dict.

    Raises:
        TypeError: an unexpected key, or one given both ways.

    Mirrors: ``torch.nn.factory_kwargs``.
    """
    if kwargs is None:
        return {}
    simple = {"device", "dtype", "memory_format"}
    unexpected = kwargs.keys() - (simple | {"factory_kwargs"})
    if unexpected:
        raise TypeError(f"unexpected kwargs {unexpected}")
    out = dict(kwargs.get("factory_kwargs", {}))
    for key in simple:
        if key in kwargs:
            if key in out:
                raise TypeError(f"{key} specified twice, in **kwargs and in factory_kwargs")
            out[key] = kwargs[key]
    return out

__all__ = ["Parameter", "Buffer", "UninitializedParameter", "UninitializedBuffer", "functional", "init", "utils", *_modules_all, "DataParallel",
           "attention", "common_types", "grad", "factory_kwargs"]
