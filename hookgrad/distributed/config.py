"""Global flags of ``torch.distributed`` (read from the environment at import).

Example:
    >>> import hookgrad.distributed.config as config
    >>> config.use_torchcomms
    False

Mirrors: ``torch.distributed.config``. hookgrad reads the flags but neither changes behaviour:
it compiles per rank, and has no torchcomms.
"""

from __future__ import annotations

import os

__all__ = ["compile_on_one_rank", "use_torchcomms"]

compile_on_one_rank: bool = bool(os.environ.get("TORCH_DISTRIBUTED_COMPILE_ON_ONE_RANK", False))
use_torchcomms: bool = os.environ.get("TORCH_DISTRIBUTED_USE_TORCHCOMMS", "0") not in \
    ("", "0", "false", "False")
