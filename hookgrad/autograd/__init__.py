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
    enforce_grad_layout_policy,
    inference_mode,
    is_grad_enabled,
    no_grad,
    set_grad_enabled,
)

_tensor_api.install()
from hookgrad.autograd.variable import Variable
from hookgrad.autograd._saved import SavedTensor
from hookgrad.autograd._multithreading import is_multithreading_enabled, set_multithreading_enabled
from hookgrad.autograd._profiler_types import (
    DeviceType,
    ProfilerActivity,
    ProfilerConfig,
    ProfilerState,
    kineto_available,
)
from hookgrad.autograd._torch_function import handle_torch_function, has_torch_function, is_tensor_like
from hookgrad.autograd.function import NestedIOFunction
from hookgrad.autograd import profiler, profiler_legacy, profiler_util  # noqa: E402


def is_view_replay_enabled() -> bool:
    """False: views are tracked with their view functions, never replayed by ``as_strided``.

    Mirrors: ``torch.autograd.is_view_replay_enabled``.
    """
    return False


__all__ = [
    "backward", "grad", "graph", "forward_ad", "functional", "Variable", "no_grad", "enable_grad", "set_grad_enabled",
    "inference_mode", "is_grad_enabled", "detect_anomaly", "set_detect_anomaly",
    "Function", "once_differentiable", "gradcheck", "gradgradcheck",
    "SavedTensor", "set_multithreading_enabled", "is_multithreading_enabled", "DeviceType",
    "ProfilerActivity", "ProfilerConfig", "ProfilerState", "kineto_available",
    "handle_torch_function", "has_torch_function", "is_tensor_like", "NestedIOFunction",
    "is_view_replay_enabled", "enforce_grad_layout_policy",
]

# PyTorch's ``__all__`` also lists these
__all__ += ["grad_mode", "variable"]
