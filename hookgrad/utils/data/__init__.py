"""Datasets, samplers and the `DataLoader`. Mirrors: ``torch.utils.data``."""

from __future__ import annotations

from hookgrad.utils.data._collate import default_collate, default_convert
from hookgrad.utils.data.dataloader import DataLoader, get_worker_info
from hookgrad.utils.data.datapipe import DataChunk, IterDataPipe, MapDataPipe, functional_datapipe
from hookgrad.utils.data.dataset import (
    ConcatDataset,
    Dataset,
    IterableDataset,
    Subset,
    TensorDataset,
    random_split,
)
from hookgrad.utils.data.sampler import (
    BatchSampler,
    RandomSampler,
    Sampler,
    SequentialSampler,
    SubsetRandomSampler,
)

__all__ = [
    "BatchSampler", "ConcatDataset", "DataLoader", "Dataset", "IterableDataset",
    "RandomSampler", "Sampler", "SequentialSampler", "Subset", "SubsetRandomSampler",
    "TensorDataset", "default_collate", "default_convert", "random_split", "get_worker_info",
    "DataChunk", "IterDataPipe", "MapDataPipe", "functional_datapipe",
]

# The DataPipe decorators, the DataFrame base and the pipeline graph (issue 21's census).
from hookgrad.utils.data import datapipes, graph, graph_settings  # noqa: E402
from hookgrad.utils.data.datapipes._decorator import (  # noqa: E402
    argument_validation,
    guaranteed_datapipes_determinism,
    non_deterministic,
    runtime_validation,
    runtime_validation_disabled,
)
from hookgrad.utils.data.datapipes.datapipe import DFIterDataPipe  # noqa: E402

__all__ += [
    "DFIterDataPipe", "argument_validation", "guaranteed_datapipes_determinism",
    "non_deterministic", "runtime_validation", "runtime_validation_disabled"
]

# PyTorch's ``__all__`` also lists these
__all__ += ["ChainDataset", "DistributedSampler", "StackDataset", "WeightedRandomSampler"]
