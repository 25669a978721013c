"""Signal-processing helpers. Mirrors: ``torch.signal`` (its ``windows`` submodule)."""

from hookgrad.signal import windows

__all__ = ["windows"]
