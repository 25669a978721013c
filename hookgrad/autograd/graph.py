"""The graph-level autograd API: nodes, gradient edges, multi-grad and saved-tensor hooks.

A facade over the modules that implement it (`_node`, `_edges`, `multi_grad`, `saved_hooks`);
it holds no logic, so everything below it can import those modules directly.

Mirrors: ``torch.autograd.graph``.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable

from hookgrad._tensor import Tensor
from hookgrad.autograd._edges import get_gradient_edge
from hookgrad.autograd._node import GradientEdge, Node
from hookgrad.autograd.multi_grad import register_multi_grad_hook
from hookgrad.autograd.saved_hooks import (
    allow_mutation_on_saved_tensors,
    disable_saved_tensors_hooks,
    save_on_cpu,
    saved_tensors_hooks,
)
from hookgrad.autograd.variable import Variable
from hookgrad.utils._python_dispatch import TorchDispatchMode
from hookgrad.utils.hooks import RemovableHandle

__all__ = [
    "Node",
    "GradientEdge",
    "get_gradient_edge",
    "register_multi_grad_hook",
    "saved_tensors_hooks",
    "save_on_cpu",
    "disable_saved_tensors_hooks",
    "allow_mutation_on_saved_tensors",
    "increment_version",
    "RemovableHandle",
    "TorchDispatchMode",
    "Variable",
]

log = logging.getLogger(__name__)

_STREAM_FLAGS = {"warn_on_accumulate_grad_stream_mismatch": True, "override_stale_capture": False}


def increment_version(tensor: Tensor | Iterable[Tensor]) -> None:
    """Bump the version counter of `tensor` (or of each tensor), as an in-place op would.

    Use it after changing a tensor's memory behind autograd's back, so that a saved copy of it
    is detected as stale. Inference tensors have no version counter and are left alone.

    Example:
        >>> import hookgrad as torch
        >>> t = torch.ones(2)
        >>> torch.autograd.graph.increment_version(t); t._version
        1

    Mirrors: ``torch.autograd.graph.increment_version``.
    """
    for t in (tensor,) if isinstance(tensor, Tensor) else tensor:
        if not t.is_inference():
            t._vc().value += 1


def set_warn_on_accumulate_grad_stream_mismatch(enabled: bool) -> None:
    """Record whether to warn on a CUDA stream mismatch in AccumulateGrad (no streams on CPU).

    Mirrors: ``torch.autograd.graph.set_warn_on_accumulate_grad_stream_mismatch``.
    """
    _STREAM_FLAGS["warn_on_accumulate_grad_stream_mismatch"] = bool(enabled)


def set_override_stale_capture_stream(enabled: bool) -> None:
    """Record the CUDA-graph-capture stream policy (no CUDA graphs on CPU).

    Mirrors: ``torch.autograd.graph.set_override_stale_capture_stream``.
    """
    _STREAM_FLAGS["override_stale_capture"] = bool(enabled)

# PyTorch's ``__all__`` also lists these
__all__ += ["set_warn_on_accumulate_grad_stream_mismatch", "set_override_stale_capture_stream"]
