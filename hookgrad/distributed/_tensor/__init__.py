"""The old import path of `hookgrad.distributed.tensor`.

Mirrors: ``torch.distributed._tensor`` (re-exports ``torch.distributed.tensor``).
"""

from __future__ import annotations

from hookgrad.distributed.tensor import (
    DTensor,
    Partial,
    Placement,
    Replicate,
    Shard,
    distribute_module,
    distribute_tensor,
)

__all__ = ["DTensor", "distribute_tensor", "distribute_module", "Shard", "Replicate",
           "Partial", "Placement"]
