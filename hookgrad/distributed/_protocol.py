"""What every engine agrees on: collective descriptors, the ordering check, timeout errors.

Each collective carries a small descriptor (its kind, dtype, element count, shape and root or
reduce op). Engines exchange descriptors before moving data, so a rank that issues a different
collective than its peers gets a clear ``collective mismatch`` error instead of a hang or a
silently corrupted buffer (contracts/distributed.md §11.4).
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass
from typing import Any

import numpy as np

KINDS = ("all_reduce", "broadcast", "all_gather", "all_gather_object", "broadcast_object",
         "barrier")


class DistError(RuntimeError):
    """Base of the errors raised by distributed code.

    Mirrors: ``torch.distributed.DistError``.
    """


class DistBackendError(DistError):
    """A collective failed in the engine: timeout, mismatch across ranks, or a failed peer.

    Mirrors: ``torch.distributed.DistBackendError``.
    """


@dataclass(frozen=True)
class Descriptor:
    """The parts of a collective call that every rank of a group must agree on."""

    kind: str
    dtype: str = ""
    shape: tuple[int, ...] = ()
    arg: int = 0  # root rank for broadcasts, reduce-op code for all_reduce
    nbytes: int = 0  # pickled size for object collectives (may differ across ranks)

    def key(self) -> tuple:
        """What must be equal across ranks (object sizes legitimately differ)."""
        shape = () if self.kind in ("all_gather_object", "broadcast_object") else self.shape
        arg = self.arg if self.kind != "all_gather_object" else 0
        return (self.kind, self.dtype, shape, arg)

    def encode(self, seq: int) -> np.ndarray:
        """Fixed-size int64 wire form for engines that exchange descriptors as arrays."""
        shape_code = zlib.crc32(repr(tuple(self.shape)).encode())
        dtype_code = zlib.crc32(self.dtype.encode())
        numel = int(np.prod(self.shape)) if self.shape else 0
        return np.array([seq, KINDS.index(self.kind), dtype_code, numel, shape_code, self.arg,
                         self.nbytes, 0], dtype=np.int64)


def decode_matches(mine: np.ndarray, theirs: np.ndarray) -> bool:
    """Whether two encoded descriptors describe the same collective."""
    kind = KINDS[int(mine[1])]
    fields = [0, 1] if kind in ("barrier", "all_gather_object") else [0, 1, 2, 3, 4, 5]
    if kind == "broadcast_object":
        fields = [0, 1, 5]
    return bool(np.array_equal(mine[fields], theirs[fields]))


def describe_encoded(code: np.ndarray) -> str:
    kind = KINDS[int(code[1])] if 0 <= int(code[1]) < len(KINDS) else "?"
    if kind in ("barrier", "all_gather_object", "broadcast_object"):
        return f"{kind} (collective #{int(code[0])})"
    return f"{kind} of {int(code[3])} elements, arg={int(code[5])} (collective #{int(code[0])})"


def mismatch_error(rank_a: int, what_a: str, rank_b: int, what_b: str) -> DistBackendError:
    return DistBackendError(
        f"collective mismatch: rank {rank_a} called {what_a}, rank {rank_b} called {what_b}. "
        "Every rank of a group must issue the same collectives in the same order.")


def timeout_error(kind: str, seconds: float, missing: list[int], rank: int) -> DistBackendError:
    who = ", ".join(str(r) for r in missing)
    plural = "s" if len(missing) > 1 else ""
    return DistBackendError(
        f"[rank {rank}] {kind} timed out after {seconds:g} s waiting for rank{plural} {who}: "
        f"rank{plural} {who} did not reach this collective (it failed, exited, or issued "
        "collectives in a different order).")


def p2p_timeout_error(req: Any, timeout: float) -> DistBackendError:
    """A point-to-point transfer ``req`` (``kind``, ``tag``, ``peer``, ``comm``) timed out."""
    comm = req.comm
    who = "any rank" if req.peer is None else f"rank {comm.global_ranks[req.peer]}"
    return DistBackendError(f"[rank {comm.global_rank}] {req.kind} (tag {req.tag}) timed out "
                            f"after {timeout:g} s waiting for {who}")
