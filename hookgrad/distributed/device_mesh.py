"""``hookgrad.distributed.device_mesh``: importable; building a mesh raises a clear error.

Mirrors: ``torch.distributed.device_mesh``. Device meshes describe the process layout of
DTensor / FSDP2 / tensor parallelism, none of which hookgrad has; libraries import `DeviceMesh`
at load time for annotations and ``isinstance`` checks (False for every hookgrad object).
"""

from __future__ import annotations

from typing import Any, NoReturn

__all__ = ["init_device_mesh", "DeviceMesh"]

_WHY = ("hookgrad has no device mesh (DTensor, FSDP2 and tensor parallelism are not "
        "implemented); use hookgrad.distributed process groups instead")


class DeviceMesh:
    """A layout of ranks; constructing one raises ``NotImplementedError``.

    Mirrors: ``torch.distributed.device_mesh.DeviceMesh``.
    """

    def __init__(self, device_type: str, mesh: Any, *args: Any, **kwargs: Any) -> None:
        raise NotImplementedError(f"DeviceMesh: {_WHY}")


def init_device_mesh(device_type: str, mesh_shape: Any, *args: Any, **kwargs: Any) -> NoReturn:
    """Raises ``NotImplementedError``. Mirrors: ``torch.distributed.device_mesh.init_device_mesh``."""
    raise NotImplementedError(f"init_device_mesh: {_WHY}")
