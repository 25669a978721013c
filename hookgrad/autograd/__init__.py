"""Automatic differentiation. Mirrors: ``torch.autograd``."""

from __future__ import annotations

from hookgrad.autograd import _recorder  # noqa: F401 - registers the grad recorder
from hookgrad.autograd import _tensor_api, forward_ad, functional, graph
from hookgrad.autograd._api import backward, grad
from hookgrad.autograd.anomaly_mode import detect_anomaly, set_detect_anomaly
from hookgrad.autograd.engine import ENGINE
from hookgrad.autograd.function import Function, once_differentiable
from hookgrad.autograd.gradcheck import gradcheck, gradgradcheck
from hookgrad.autograd.grad_mode import (
    enable_grad,
    inference_mode,
    is_grad_enabled,
    no_grad,
    set_grad_enabled,
)

_tensor_api.install()


class Variable:
    """Only ``Variable._execution_engine`` is provided (for ``queue_callback``).

    Mirrors: ``torch.autograd.Variable``.
    """

    _execution_engine = ENGINE


__all__ = [
    "backward", "grad", "graph", "forward_ad", "functional", "Variable", "no_grad", "enable_grad", "set_grad_enabled",
    "inference_mode", "is_grad_enabled", "detect_anomaly", "set_detect_anomaly",
    "Function", "once_differentiable", "gradcheck", "gradgradcheck",
]
