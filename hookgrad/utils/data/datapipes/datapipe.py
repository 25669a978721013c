"""Mirrors: ``torch.utils.data.datapipes.datapipe`` (the DataPipe base classes).

`IterDataPipe`, `MapDataPipe` and `DataChunk` are `hookgrad.utils.data.datapipe`'s; this module
adds `DFIterDataPipe`, the base PyTorch's DataFrame pipes derive from.
"""

from __future__ import annotations

from hookgrad.utils.data.datapipe import DataChunk, IterDataPipe, MapDataPipe

__all__ = ["DataChunk", "DFIterDataPipe", "IterDataPipe", "MapDataPipe"]


class DFIterDataPipe(IterDataPipe):
    """An IterDataPipe of DataFrames. Mirrors: ``torch.utils.data.DFIterDataPipe``."""

    def _is_dfpipe(self) -> bool:
        return True
