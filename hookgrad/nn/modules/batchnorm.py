"""The ``torch.nn.modules.batchnorm`` import path. Mirrors: ``torch.nn.modules.batchnorm``.

hookgrad keeps batch norm in ``normalization.py``; tools import ``_BatchNorm`` / ``_NormBase``
from this path at load time (to recognise batch-norm layers), so it re-exports every batch-norm
class that module defines (``BatchNorm3d``/``SyncBatchNorm`` appear here once they exist there).
"""

from __future__ import annotations

from hookgrad.nn.modules import normalization as _normalization

__all__ = [
    name for name in dir(_normalization)
    if "BatchNorm" in name and isinstance(getattr(_normalization, name), type)
    and not name.startswith("_")
]
_NormBase = _normalization._NormBase
_BatchNorm = _normalization._BatchNorm
globals().update({name: getattr(_normalization, name) for name in __all__})
