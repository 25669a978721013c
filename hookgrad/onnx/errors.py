"""Mirrors: ``torch.onnx.errors``."""

from __future__ import annotations

__all__ = ["OnnxExporterError", "UnsupportedOperatorError", "SymbolicValueError"]


class OnnxExporterError(RuntimeError):
    """Errors raised by the ONNX exporter. Mirrors: ``torch.onnx.errors.OnnxExporterError``."""


class UnsupportedOperatorError(OnnxExporterError):
    """Mirrors: ``torch.onnx.errors.UnsupportedOperatorError``."""


class SymbolicValueError(OnnxExporterError):
    """Mirrors: ``torch.onnx.errors.SymbolicValueError``."""
