"""Mirrors ``torch.compiler`` (``is_compiling``, ``disable``, ``reset``)."""

from __future__ import annotations

from hookgrad import _config
from hookgrad.compile.api import disable
from hookgrad.compile.state import TRACES
from hookgrad._dynamo.eval_frame import reset

__all__ = ["is_compiling", "disable", "reset"]


def is_compiling() -> bool:
    """True while a trace (of a forward or of a compiled-autograd graph) is running.

    Mirrors: ``torch.compiler.is_compiling``.
    """
    return bool(TRACES)


_config.IS_COMPILING[0] = is_compiling  # asked by lower layers (nn's TransformerEncoder)
