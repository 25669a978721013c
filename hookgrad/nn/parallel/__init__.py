"""Data-parallel wrappers. Mirrors: ``torch.nn.parallel``."""

from hookgrad.nn.modules.data_parallel import DataParallel
from hookgrad.nn.parallel import scatter_gather
from hookgrad.nn.parallel.distributed import DistributedDataParallel

__all__ = ["DataParallel", "DistributedDataParallel"]
