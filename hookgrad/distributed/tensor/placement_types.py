"""Where PyTorch defines the DTensor placements. Mirrors: ``torch.distributed.tensor.placement_types``."""

from __future__ import annotations

from hookgrad.distributed.tensor import Partial, Placement, Replicate, Shard

__all__ = ["Placement", "Shard", "Replicate", "Partial"]


class _StridedShard(Shard):
    """A shard taking one chunk from each of `split_factor` groups along `dim` (a record).

    Mirrors: ``torch.distributed.tensor.placement_types._StridedShard``.
    """

    def __init__(self, dim: int, *, split_factor: int = 1, sf: int | None = None) -> None:
        object.__setattr__(self, "dim", dim)
        object.__setattr__(self, "split_factor", sf if sf is not None else split_factor)

    def is_shard(self, dim: int | None = None) -> bool:
        """False, as PyTorch's (a strided shard is not a plain `Shard`)."""
        return False

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, _StridedShard) and self.dim == other.dim
                and self.split_factor == other.split_factor)

    def __hash__(self) -> int:
        return hash((self.dim, self.split_factor))

    def __repr__(self) -> str:
        return f"_StridedShard(dim={self.dim}, sf={self.split_factor})"

    def __str__(self) -> str:
        return f"_S({self.dim}, {self.split_factor})"
