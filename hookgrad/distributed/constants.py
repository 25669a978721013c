"""Default timeouts of ``torch.distributed`` process groups.

Mirrors: ``torch.distributed.constants`` (training frameworks such as Lightning import
``default_pg_timeout`` from here at load time). hookgrad has no NCCL, so
``default_pg_nccl_timeout`` is ``None``, as PyTorch's is in a build without NCCL.

Example:
    >>> from hookgrad.distributed.constants import default_pg_timeout
    >>> default_pg_timeout.total_seconds()
    1800.0
"""

from __future__ import annotations

from datetime import timedelta

from hookgrad.distributed._names import default_pg_timeout

__all__ = ["default_pg_timeout", "default_pg_nccl_timeout"]

_DEFAULT_PG_TIMEOUT = default_pg_timeout
# PyTorch sets this only when built with NCCL; a CPU build leaves it None
default_pg_nccl_timeout: timedelta | None = None
