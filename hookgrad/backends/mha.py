"""``hookgrad.backends.mha``: the switch of the nested-tensor fast path of
``nn.TransformerEncoder`` (see ``hookgrad/nn/modules/_encoder_fastpath.py``).

Mirrors: ``torch.backends.mha``.
"""

from __future__ import annotations

from hookgrad._config import GLOBAL

__all__ = ["get_fastpath_enabled", "set_fastpath_enabled"]


def get_fastpath_enabled() -> bool:
    """Whether the fast path may run. Mirrors: ``torch.backends.mha.get_fastpath_enabled``."""
    return GLOBAL.mha_fastpath


def set_fastpath_enabled(value: bool) -> None:
    """Allow or forbid the fast path. Mirrors: ``torch.backends.mha.set_fastpath_enabled``."""
    GLOBAL.mha_fastpath = bool(value)
