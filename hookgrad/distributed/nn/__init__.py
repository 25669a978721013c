"""Mirrors: ``torch.distributed.nn`` (its autograd-aware collectives; hookgrad has no
``RemoteModule``, which needs RPC: ``torch.distributed.rpc.is_available()`` is False)."""

from hookgrad.distributed.nn.functional import all_gather, all_reduce, broadcast

__all__ = ["all_gather", "all_reduce", "broadcast"]
