"""Data-parallel wrappers. Mirrors: ``torch.nn.parallel``."""

from hookgrad.nn.parallel import comm, scatter_gather
from hookgrad.nn.parallel.data_parallel import DataParallel, data_parallel
from hookgrad.nn.parallel.distributed import DistributedDataParallel
from hookgrad.nn.parallel.parallel_apply import parallel_apply
from hookgrad.nn.parallel.replicate import replicate
from hookgrad.nn.parallel.scatter_gather import gather, scatter

__all__ = ["replicate", "scatter", "parallel_apply", "gather", "data_parallel", "DataParallel",
           "DistributedDataParallel"]
