"""Mirrors: ``torch.backends.quantized``: the quantized engine setting.

hookgrad runs no quantized kernels (``torch.ao`` raises), but tools read and set the engine at
start-up; the setting is validated and remembered as PyTorch's is on an x86 CPU build.
"""

from __future__ import annotations

import sys
import types

__all__ = ["engine", "supported_engines"]

_ENGINES = ("none", "fbgemm", "qnnpack", "onednn", "x86")
_SUPPORTED = ["qnnpack", "onednn", "x86", "fbgemm"]
_state = {"engine": "x86"}


class _QuantizedEngine(types.ModuleType):
    @property
    def engine(self) -> str:
        return _state["engine"]

    @engine.setter
    def engine(self, value: str) -> None:
        value = "none" if value in ("", None) else value
        if value not in _ENGINES:
            raise RuntimeError(f"{value} is not a valid value for quantized engine")
        if value not in _SUPPORTED and value != "none":
            raise RuntimeError("Quantized engine is not supported")  # PyTorch's C++ check
        _state["engine"] = value

    @property
    def supported_engines(self) -> list:
        return list(_SUPPORTED)

    @supported_engines.setter
    def supported_engines(self, value: list) -> None:
        raise RuntimeError("Assignment not supported")


sys.modules[__name__].__class__ = _QuantizedEngine
