"""``hookgrad.amp``: automatic mixed precision on a machine without CUDA.

Mirrors: ``torch.amp`` (``autocast``, ``GradScaler``, ``custom_fwd``/``custom_bwd``,
``is_autocast_available``). See `hookgrad.amp.autocast_mode` for what autocast does here.
"""

from __future__ import annotations

from hookgrad.amp import autocast_mode, grad_scaler
from hookgrad.amp.autocast_mode import autocast, custom_bwd, custom_fwd, is_autocast_available
from hookgrad.amp.grad_scaler import GradScaler

__all__ = ["autocast", "custom_bwd", "custom_fwd", "is_autocast_available", "GradScaler",
           "autocast_mode", "grad_scaler"]
