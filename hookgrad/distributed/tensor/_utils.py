"""DTensor's shape helpers (need a device mesh, which hookgrad has not).

Mirrors: ``torch.distributed.tensor._utils`` (transformers imports
``compute_local_shape_and_global_offset`` at load time).
"""

from __future__ import annotations

from typing import Any, NoReturn

__all__ = ["compute_local_shape_and_global_offset"]


def compute_local_shape_and_global_offset(global_shape: Any, mesh: Any, placements: Any,
                                          skip_offset: bool = False) -> NoReturn:
    """Raises ``NotImplementedError`` (no DeviceMesh / DTensor in hookgrad).

    Mirrors: ``torch.distributed.tensor._utils.compute_local_shape_and_global_offset``.
    """
    raise NotImplementedError("compute_local_shape_and_global_offset: hookgrad has no "
                              "distributed tensor (DTensor) or device mesh")
