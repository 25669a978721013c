"""Mirrors ``torch._dynamo.compiled_autograd`` (``_enable``/``enable``, ``_disable``)."""

from __future__ import annotations

from hookgrad.compile.compiled_autograd.compiled_autograd import disable as _disable
from hookgrad.compile.compiled_autograd.compiled_autograd import enable, in_compiled_autograd_region
from hookgrad.compile.compiled_autograd.compiled_autograd import reset_compiled_autograd as reset

_enable = enable

__all__ = ["enable", "_enable", "_disable", "in_compiled_autograd_region", "reset"]
