"""The composable FSDP path. Mirrors: ``torch.distributed._composable.fsdp``.

Re-exports `hookgrad.distributed.fsdp`'s `FSDPModule` and `fully_shard` (the same objects, as
in PyTorch).
"""

from __future__ import annotations

from hookgrad.distributed.fsdp import FSDPModule, fully_shard

__all__ = ["FSDPModule", "fully_shard"]
