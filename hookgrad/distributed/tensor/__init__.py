"""``hookgrad.distributed.tensor``: importable; distributing a tensor raises a clear error.

Mirrors: ``torch.distributed.tensor``. hookgrad has no sharded tensor (DTensor). Libraries
import `DTensor` at load time to test ``type(p) is DTensor``; those tests are False for every
hookgrad tensor. The placement records (`Shard`, `Replicate`, `Partial`) compare and print as
PyTorch's; `distribute_tensor`, `distribute_module` and constructing a `DTensor` raise
``NotImplementedError``.

Example:
    >>> import hookgrad
    >>> from hookgrad.distributed.tensor import DTensor, Shard
    >>> type(hookgrad.zeros(2)) is DTensor, Shard(0)
    (False, Shard(dim=0))
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, NoReturn

from hookgrad._tensor import Tensor

__all__ = ["DTensor", "distribute_tensor", "distribute_module", "Shard", "Replicate",
           "Partial", "Placement"]

_WHY = ("hookgrad has no distributed tensor (DTensor); shard with "
        "hookgrad.distributed collectives or DistributedDataParallel instead")


def _unsupported(what: str) -> NoReturn:
    raise NotImplementedError(f"{what}: {_WHY}")


class DTensor(Tensor):
    """PyTorch's sharded tensor class; hookgrad creates none (see module docstring).

    Mirrors: ``torch.distributed.tensor.DTensor``.
    """

    def __new__(cls, *args: Any, **kwargs: Any) -> DTensor:
        _unsupported("DTensor")

    @staticmethod
    def from_local(*args: Any, **kwargs: Any) -> DTensor:
        """Raises ``NotImplementedError``. Mirrors: ``DTensor.from_local``."""
        _unsupported("DTensor.from_local")


class Placement:
    """Base of the placement records. Mirrors: ``torch.distributed.tensor.Placement``."""

    def is_shard(self, dim: int | None = None) -> bool:
        """Whether this is a `Shard` (on `dim` when given)."""
        return isinstance(self, Shard) and (dim is None or self.dim == dim)

    def is_replicate(self) -> bool:
        """Whether this is `Replicate`."""
        return isinstance(self, Replicate)

    def is_partial(self) -> bool:
        """Whether this is `Partial`."""
        return isinstance(self, Partial)


@dataclass(frozen=True)
class Shard(Placement):
    """Split along `dim`. Mirrors: ``torch.distributed.tensor.Shard``."""

    dim: int

    def __str__(self) -> str:
        return f"S({self.dim})"


@dataclass(frozen=True)
class Replicate(Placement):
    """A full copy on every rank. Mirrors: ``torch.distributed.tensor.Replicate``."""

    def __repr__(self) -> str:
        return "Replicate()"

    def __str__(self) -> str:
        return "R"


@dataclass(frozen=True)
class Partial(Placement):
    """Pending reduction. Mirrors: ``torch.distributed.tensor.Partial``."""

    reduce_op: str = "sum"

    def __repr__(self) -> str:
        return f"Partial({self.reduce_op})"

    def __str__(self) -> str:
        return f"P({self.reduce_op})"


def distribute_tensor(tensor: Any, device_mesh: Any = None, placements: Any = None,
                      **kwargs: Any) -> NoReturn:
    """Raises ``NotImplementedError``. Mirrors: ``torch.distributed.tensor.distribute_tensor``."""
    _unsupported("distribute_tensor")


def distribute_module(module: Any, device_mesh: Any = None, partition_fn: Any = None,
                      **kwargs: Any) -> NoReturn:
    """Raises ``NotImplementedError``. Mirrors: ``torch.distributed.tensor.distribute_module``."""
    _unsupported("distribute_module")
