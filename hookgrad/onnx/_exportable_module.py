"""`ExportableModule`: a Module that carries its own ONNX export settings.

A subclass implements `example_arguments` (and may override `dynamic_shapes`, `input_names`,
`output_names`); `to_onnx` hands the module to ``torch.onnx.export`` with extra options. hookgrad
has no exporter, so `to_onnx` raises ``torch.onnx.export``'s `OnnxExporterError`; the rest
(the abstract contract, the defaults, running the module) is PyTorch's.

Mirrors: ``torch.onnx.ExportableModule``.
"""

from __future__ import annotations

import abc
import importlib
from collections.abc import Sequence
from typing import Any

from hookgrad.nn.modules.module import Module

__all__ = ["ExportableModule"]


class ExportableModule(Module, abc.ABC):
    """A Module with export settings; implement `example_arguments`.

    Mirrors: ``torch.onnx.ExportableModule``.
    """

    @abc.abstractmethod
    def example_arguments(self) -> tuple[tuple[Any], dict[str, Any] | None]:
        """(positional arguments, keyword arguments or None) to trace the forward with."""
        raise NotImplementedError

    def dynamic_shapes(self) -> Any:
        """The dynamic-shape specification of the inputs (default: none)."""
        return None

    def input_names(self) -> Sequence[str] | None:
        """Names of the exported graph's inputs (default: the exporter's)."""
        return None

    def output_names(self) -> Sequence[str] | None:
        """Names of the exported graph's outputs (default: the exporter's)."""
        return None

    def to_onnx(self, **kwargs: Any) -> Any:
        """Export with ``torch.onnx.export(self, **kwargs)`` (raises: hookgrad has no exporter)."""
        result = importlib.import_module("hookgrad.onnx").export(self, **kwargs)
        if result is None:
            raise AssertionError("result must be non-None")
        return result
