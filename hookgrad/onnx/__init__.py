"""``hookgrad.onnx``: importable; exporting raises a clear error.

Mirrors: ``torch.onnx``. hookgrad has no ONNX exporter: `export` raises `OnnxExporterError`
(a RuntimeError, as PyTorch's). The pieces that need no exporter behave as PyTorch's:
``is_in_onnx_export()`` is False, the enums carry PyTorch's members, custom-symbolic
registration keeps its table, and `select_model_mode_for_export` switches train/eval for a block.
"""

from __future__ import annotations

import enum
from contextlib import contextmanager
from typing import Any, Callable, Iterator

from hookgrad.onnx import errors
from hookgrad.onnx.errors import OnnxExporterError

__all__ = ["export", "is_in_onnx_export", "OnnxExporterError", "TrainingMode",
           "OperatorExportTypes", "TensorProtoDataType", "JitScalarType", "ONNXProgram",
           "register_custom_op_symbolic", "unregister_custom_op_symbolic",
           "select_model_mode_for_export", "producer_name", "producer_version", "errors"]

producer_name = "pytorch"
producer_version = "2.13.0"
_SYMBOLICS: dict[tuple[str, int], Callable] = {}


class TrainingMode(enum.IntEnum):
    """Mirrors: ``torch.onnx.TrainingMode``."""

    EVAL = 0
    PRESERVE = 1
    TRAINING = 2


class OperatorExportTypes(enum.IntEnum):
    """Mirrors: ``torch.onnx.OperatorExportTypes``."""

    ONNX = 0
    ONNX_ATEN = 1
    ONNX_ATEN_FALLBACK = 2
    ONNX_FALLTHROUGH = 3


class TensorProtoDataType(enum.IntEnum):
    """Mirrors: ``torch.onnx.TensorProtoDataType`` (ONNX's element type codes)."""

    UNDEFINED = 0
    FLOAT = 1
    UINT8 = 2
    INT8 = 3
    UINT16 = 4
    INT16 = 5
    INT32 = 6
    INT64 = 7
    STRING = 8
    BOOL = 9
    FLOAT16 = 10
    DOUBLE = 11
    UINT32 = 12
    UINT64 = 13
    COMPLEX64 = 14
    COMPLEX128 = 15
    BFLOAT16 = 16
    FLOAT8E4M3FN = 17
    FLOAT8E4M3FNUZ = 18
    FLOAT8E5M2 = 19
    FLOAT8E5M2FNUZ = 20


class JitScalarType(enum.IntEnum):
    """Mirrors: ``torch.onnx.JitScalarType`` (scalar type codes)."""

    UINT8 = 0
    INT8 = 1
    INT16 = 2
    INT = 3
    INT64 = 4
    HALF = 5
    FLOAT = 6
    DOUBLE = 7
    COMPLEX32 = 8
    COMPLEX64 = 9
    COMPLEX128 = 10
    BOOL = 11
    QINT8 = 12
    QUINT8 = 13
    QINT32 = 14
    BFLOAT16 = 15
    FLOAT8E5M2 = 16
    FLOAT8E4M3FN = 17
    FLOAT8E5M2FNUZ = 18
    FLOAT8E4M3FNUZ = 19
    UNDEFINED = 20


_MESSAGE = "hookgrad has no ONNX exporter; export the model with PyTorch instead"


def export(model: Any, args: Any = (), f: Any = None, **kwargs: Any) -> Any:
    """Always raises `OnnxExporterError`. Mirrors: ``torch.onnx.export``."""
    raise OnnxExporterError(_MESSAGE)


class ONNXProgram:
    """Mirrors: ``torch.onnx.ONNXProgram`` (only `export` creates one; it cannot here)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise OnnxExporterError(_MESSAGE)


def is_in_onnx_export() -> bool:
    """Mirrors: ``torch.onnx.is_in_onnx_export``."""
    return False


def register_custom_op_symbolic(symbolic_name: str, symbolic_fn: Callable,
                                opset_version: int) -> None:
    """Record a symbolic function (used by no exporter here). Mirrors: ``torch.onnx.register_custom_op_symbolic``."""
    if symbolic_name.startswith("::"):
        symbolic_name = f"aten{symbolic_name}"
    if "::" not in symbolic_name:
        raise ValueError(f"Failed to register operator {symbolic_name}. The symbolic name must "
                         "match the format domain::name, and should start with a letter and "
                         "contain only alphanumerical characters")
    _SYMBOLICS[(symbolic_name, opset_version)] = symbolic_fn


def unregister_custom_op_symbolic(symbolic_name: str, opset_version: int) -> None:
    """Mirrors: ``torch.onnx.unregister_custom_op_symbolic``."""
    if symbolic_name.startswith("::"):
        symbolic_name = f"aten{symbolic_name}"
    _SYMBOLICS.pop((symbolic_name, opset_version), None)


@contextmanager
def select_model_mode_for_export(model: Any, mode: TrainingMode) -> Iterator[None]:
    """Put `model` in train/eval mode for the block. Mirrors: ``torch.onnx.select_model_mode_for_export``."""
    if not isinstance(mode, TrainingMode):
        raise TypeError(f"'mode' should be a torch.onnx.TrainingMode enum, but got "
                        f"'{type(mode)}'.")
    was_training = model.training
    if mode != TrainingMode.PRESERVE:
        model.train(mode == TrainingMode.TRAINING)
    try:
        yield
    finally:
        if mode != TrainingMode.PRESERVE:
            model.train(was_training)


from hookgrad.onnx._exportable_module import ExportableModule  # noqa: E402

ExportableModule.__module__ = "hookgrad.onnx"
__all__ += ["ExportableModule"]
