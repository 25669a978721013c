"""Mirrors ``torch.compiler``: ``is_compiling``, ``disable``, ``reset``, the marking decorators
(``allow_in_graph``, ``assume_constant_result``), ``list_backends`` and the export predicate."""

from __future__ import annotations

from typing import Any

from hookgrad import _config
from hookgrad.compile.api import disable
from hookgrad.compile.core.state import TRACES
from hookgrad._dynamo import decorators as _decorators
from hookgrad._dynamo.eval_frame import reset
from hookgrad.compile.backends.backends import list_backends

__all__ = ["is_compiling", "is_dynamo_compiling", "is_exporting", "disable", "reset",
           "cudagraph_mark_step_begin",
           "allow_in_graph", "assume_constant_result", "list_backends"]


def is_compiling() -> bool:
    """True while a trace (of a forward or of a compiled-autograd graph) is running.

    Mirrors: ``torch.compiler.is_compiling``.
    """
    return bool(TRACES)


def is_dynamo_compiling() -> bool:
    """True while hookgrad's tracer runs (it is both PyTorch's Dynamo and its later stages).

    Mirrors: ``torch.compiler.is_dynamo_compiling``.
    """
    return bool(TRACES)


def is_exporting() -> bool:
    """Always False: hookgrad has no ``torch.export`` tracer.

    Mirrors: ``torch.compiler.is_exporting``.
    """
    return False


def cudagraph_mark_step_begin() -> None:
    """Mark a new CUDA-graph iteration: no CUDA graphs exist on hookgrad's CPU backends, so
    there is nothing to mark. Mirrors: ``torch.compiler.cudagraph_mark_step_begin``."""


def allow_in_graph(fn: Any) -> Any:
    """Mirrors: ``torch.compiler.allow_in_graph`` (see ``hookgrad._dynamo.allow_in_graph``)."""
    return _decorators.allow_in_graph(fn)


def assume_constant_result(fn: Any) -> Any:
    """Mirrors: ``torch.compiler.assume_constant_result`` (marks `fn`, returns it)."""
    return _decorators.assume_constant_result(fn)


_config.IS_COMPILING[0] = is_compiling  # asked by lower layers (nn's TransformerEncoder)
