"""``torch._C._autograd`` names. Mirrors: ``torch._C._autograd`` (a small subset)."""

from __future__ import annotations

from hookgrad._config import STATE
from hookgrad.autograd._saved import SavedTensor

__all__ = ["_saved_tensors_hooks_is_enabled", "SavedTensor"]


def _saved_tensors_hooks_is_enabled() -> bool:
    """False inside ``disable_saved_tensors_hooks``.

    Mirrors: ``torch._C._autograd._saved_tensors_hooks_is_enabled``.
    """
    return STATE.saved_hooks_disabled_msg is None
