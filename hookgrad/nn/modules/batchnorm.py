"""The ``torch.nn.modules.batchnorm`` import path. Mirrors: ``torch.nn.modules.batchnorm``.

hookgrad keeps batch norm in ``normalization.py`` and the 3-d/sync variants in
``batchnorm3d.py``; tools import ``_BatchNorm`` / ``_NormBase`` from this path at load time to
recognise batch-norm layers, so it re-exports every batch-norm class of those files.
"""

from __future__ import annotations

from hookgrad.nn.modules.batchnorm3d import BatchNorm3d, SyncBatchNorm
from hookgrad.nn.modules.normalization import BatchNorm1d, BatchNorm2d, _BatchNorm, _NormBase

__all__ = ["BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "SyncBatchNorm", "_BatchNorm",
           "_NormBase"]
