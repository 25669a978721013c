"""``hookgrad.cuda.amp``: the deprecated CUDA spellings of ``hookgrad.amp``.

Mirrors: ``torch.cuda.amp`` (``autocast``, ``GradScaler``, ``custom_fwd``, ``custom_bwd``), each
warning ``FutureWarning`` as PyTorch's do and then acting as ``hookgrad.amp`` with ``"cuda"``.
"""

from __future__ import annotations

from hookgrad.cuda.amp import autocast_mode, common, grad_scaler
from hookgrad.cuda.amp.autocast_mode import autocast, custom_bwd, custom_fwd
from hookgrad.cuda.amp.grad_scaler import GradScaler
from hookgrad.cuda.amp.common import amp_definitely_not_available

__all__ = ["autocast", "custom_bwd", "custom_fwd", "GradScaler", "autocast_mode", "common",
           "grad_scaler", "amp_definitely_not_available"]
