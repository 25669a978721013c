"""Options of the chunked ``linear_cross_entropy``. Mirrors:
``torch.nn.modules.linear_cross_entropy_options``."""

from __future__ import annotations

import dataclasses
from typing import Any

__all__ = ["LinearCrossEntropyOptions"]


@dataclasses.dataclass(slots=True, frozen=True)
class LinearCrossEntropyOptions:
    """Settings of PyTorch's batch-chunked ``linear_cross_entropy`` kernel (accepted; hookgrad
    computes the reference path, see `hookgrad.nn.functional.linear_cross_entropy`).

    Mirrors: ``torch.nn.modules.linear_cross_entropy_options.LinearCrossEntropyOptions``.
    """

    allow_retain_graph: bool = False
    batch_chunk_size: int | None = None
    chunking_method: str = "auto"
    acc_policy: str = "auto"
    acc_dtype: Any = None
