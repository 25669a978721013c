"""The ``torch._C`` names that tools and PyTorch's own tests reach for.

PyTorch's ``_C`` is its C++ extension; hookgrad has none, so this package only gathers the
handful of private entry points people use from Python, each backed by hookgrad's engine.

Mirrors: ``torch._C`` (a small subset).
"""

from __future__ import annotations

import weakref
from typing import Any

from hookgrad._C import _autograd, _functions, _functorch
from hookgrad._C._census import *  # noqa: F403  (issue 21: more of the names tools reach for)
from hookgrad._C import _census
from hookgrad._C._functorch import _are_functorch_transforms_active
from hookgrad.autograd import _multithreading
from hookgrad.utils import _python_dispatch
from hookgrad.autograd.engine import current_graph_task_id as _current_graph_task_id
from hookgrad.autograd.engine import will_engine_execute_node as _will_engine_execute_node
from hookgrad.autograd.grad_mode import is_grad_enabled, set_grad_enabled

__all__ = [
    "_autograd", "_functions", "_functorch", "_current_graph_task_id", "_will_engine_execute_node",
    "_WeakTensorRef", "is_grad_enabled", "_set_grad_enabled", "_get_tracing_state",
    "_is_multithreading_enabled", "_DisableTorchDispatch", "_are_functorch_transforms_active", "_get_accelerator",
    *_census.__all__,
]


def _get_accelerator(check: bool = False) -> Any:
    """The current accelerator's device: the CPU (hookgrad's other backends are not PyTorch
    accelerators). Mirrors: ``torch._C._get_accelerator``."""
    from hookgrad._backend import device
    return device("cpu")


def _set_grad_enabled(mode: bool) -> None:
    """Set grad mode (not a context manager). Mirrors: ``torch._C._set_grad_enabled``."""
    set_grad_enabled(mode)


def _get_tracing_state() -> None:
    """None: there is no TorchScript tracer. Mirrors: ``torch._C._get_tracing_state``."""
    return None


def _is_multithreading_enabled() -> bool:
    """Whether the engine may run on worker threads. Mirrors: ``torch._C._is_multithreading_enabled``."""
    return _multithreading.is_multithreading_enabled()


class _WeakTensorRef:
    """A weak reference to a tensor. Mirrors: ``torch._C._WeakTensorRef``."""

    __slots__ = ("_ref",)

    def __init__(self, tensor: Any) -> None:
        self._ref = weakref.ref(tensor)

    def expired(self) -> bool:
        return self._ref() is None


class _DisableTorchDispatch:
    """Context manager: no dispatch mode sees the ops run inside it.

    Mirrors: ``torch._C._DisableTorchDispatch`` (hookgrad has no tensor subclasses to skip).
    """

    def __enter__(self) -> None:
        self._ctx = _python_dispatch._disable_current_modes()
        self._ctx.__enter__()

    def __exit__(self, *exc: object) -> None:
        self._ctx.__exit__(*exc)


# Names libraries import from ``torch._C`` at load time (issue 21): Lightning annotates with
# ``_TensorMeta`` (the metaclass of Tensor) and reads checkpoints with ``PyTorchFileReader``.
from hookgrad._serialization.file_reader import PyTorchFileReader  # noqa: E402
from hookgrad._tensor import Tensor as _Tensor  # noqa: E402

_TensorMeta = type(_Tensor)
__all__ += ["PyTorchFileReader", "_TensorMeta"]

from hookgrad._runtime import (  # noqa: E402
    get_deterministic_fill_uninitialized_memory as _get_deterministic_fill_uninitialized_memory,
    set_deterministic_fill_uninitialized_memory as _set_deterministic_fill_uninitialized_memory,
)

__all__ += ["_get_deterministic_fill_uninitialized_memory",
            "_set_deterministic_fill_uninitialized_memory"]
