"""The logging handlers c10d's logger may write to, by destination name.

Mirrors: ``torch.distributed.logging_handlers`` (``"default"`` discards records; programs add
their own destinations to ``_log_handlers``).
"""

from __future__ import annotations

import logging

__all__: list[str] = []

_log_handlers: dict[str, logging.Handler] = {"default": logging.NullHandler()}
