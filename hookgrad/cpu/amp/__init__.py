"""``hookgrad.cpu.amp``: the deprecated CPU spellings of ``hookgrad.amp``.

Mirrors: ``torch.cpu.amp`` (``autocast``, ``GradScaler``): each warns ``FutureWarning`` as
PyTorch's does, then acts as ``hookgrad.amp`` with ``"cpu"``.
"""

from __future__ import annotations

from hookgrad.cpu.amp import autocast_mode, grad_scaler
from hookgrad.cpu.amp.autocast_mode import autocast
from hookgrad.cpu.amp.grad_scaler import GradScaler

__all__ = ["autocast", "GradScaler", "autocast_mode", "grad_scaler"]
