"""Distributed algorithms (DDP communication hooks). Mirrors: ``torch.distributed.algorithms``."""

from hookgrad.distributed.algorithms import ddp_comm_hooks

__all__ = ["ddp_comm_hooks"]
