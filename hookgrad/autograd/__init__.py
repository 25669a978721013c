"""Automatic differentiation. Mirrors: ``torch.autograd``."""

from __future__ import annotations

from hookgrad.autograd import _recorder  # noqa: F401 - registers the grad recorder
from hookgrad.autograd import _tensor_api, forward_ad, functional, graph
from hookgrad.autograd._api import backward, grad
from hookgrad.autograd.anomaly_mode import detect_anomaly, set_detect_anomaly
from hookgrad.autograd.engine import ENGINE  # noqa: F401  (torch.autograd has no ENGINE; kept for callers)
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
from hookgrad.autograd.variable import Variable
from hookgrad.autograd._saved import SavedTensor
from hookgrad.autograd._multithreading import set_multithreading_enabled


__all__ = [
    "backward", "grad", "graph", "forward_ad", "functional", "Variable", "no_grad", "enable_grad", "set_grad_enabled",
    "inference_mode", "is_grad_enabled", "detect_anomaly", "set_detect_anomaly",
    "Function", "once_differentiable", "gradcheck", "gradgradcheck",
    "SavedTensor", "set_multithreading_enabled",
]
