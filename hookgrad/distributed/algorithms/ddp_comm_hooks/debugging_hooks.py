"""Debugging comm hooks. Mirrors: ``torch.distributed.algorithms.ddp_comm_hooks.debugging_hooks``."""

from __future__ import annotations

from typing import Any

from hookgrad._tensor import Tensor
from hookgrad.distributed.grad_bucket import GradBucket
from hookgrad.futures import Future


def noop_hook(_: Any, bucket: GradBucket) -> Future[Tensor]:
    """No communication: an already completed future holding the local bucket buffer.

    Mirrors: ``torch.distributed.algorithms.ddp_comm_hooks.debugging_hooks.noop_hook``.
    """
    fut: Future = Future()
    fut.set_result(bucket.buffer())
    return fut


__all__ = ["noop_hook"]
