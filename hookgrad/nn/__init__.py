"""Neural-network modules, functional ops, initialisers and utilities. Mirrors: ``torch.nn``."""

from __future__ import annotations

from hookgrad.nn import functional, init
from hookgrad.nn import modules
from hookgrad.nn import utils
from hookgrad.nn.modules import *  # noqa: F403
from hookgrad.nn.modules import __all__ as _modules_all
from hookgrad.nn.parameter import Buffer, Parameter, UninitializedBuffer, UninitializedParameter
from hookgrad.nn.modules.data_parallel import DataParallel  # torch.nn.DataParallel

__all__ = ["Parameter", "Buffer", "UninitializedParameter", "UninitializedBuffer", "functional", "init", "utils", *_modules_all, "DataParallel"]
