"""``hookgrad.backends``: the backend switches training scripts set or query.

Mirrors: ``torch.backends.cudnn`` (``enabled``, ``benchmark``, ``deterministic``,
``is_available``) and ``torch.backends.mps`` (``is_available``, ``is_built``). hookgrad runs on
NumPy (and later CuPy), so these are recorded settings with no effect on results.
"""

from __future__ import annotations

from types import SimpleNamespace

__all__ = ["cudnn", "mps"]


def _false() -> bool:
    return False


cudnn = SimpleNamespace(enabled=True, benchmark=False, deterministic=False,
                        allow_tf32=True, is_available=_false)
cudnn.__doc__ = "Mirrors: ``torch.backends.cudnn`` (settings recorded; cuDNN is never used)."
mps = SimpleNamespace(is_available=_false, is_built=_false)
mps.__doc__ = "Mirrors: ``torch.backends.mps`` (Apple GPUs are not supported)."
