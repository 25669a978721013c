"""``_pack_padded_sequence`` (``PackPaddedSequenceBackward0``) and its backward op.

Layer 3. Packing keeps, for each time step ``t``, the first ``batch_sizes[t]`` rows of a padded
``[T, B, *]`` input (the sequences still running, longest first) and concatenates them. Its
gradient scatters the packed rows back into zeros of the input's shape; that scatter is a
primitive whose own derivative is packing again, so double backward works with one body per rule.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from hookgrad._backend import namespace_of
from hookgrad._dispatch import bind
from hookgrad._ops.registry import defop
from hookgrad._tensor import Tensor


def batch_sizes_of(lengths: Sequence[int]) -> np.ndarray:
    """``batch_sizes[t]`` = how many of the (descending) `lengths` exceed ``t``."""
    lens = np.asarray(lengths, dtype=np.int64)
    return (lens[None, :] > np.arange(int(lens[0]))[:, None]).sum(axis=1).astype(np.int64)


def _time_major(x: Any, batch_first: bool) -> Any:
    return x.swapaxes(0, 1) if batch_first else x


def _pack_impl(input: Any, lengths: Sequence[int], batch_first: bool) -> Any:
    # ATen's op also returns batch_sizes; it is built on the CPU by `pack` instead (PyTorch
    # keeps it there whatever the data's device), so the primitive has one output.
    xp = namespace_of(input)
    x = _time_major(input, batch_first)
    sizes = batch_sizes_of(lengths)
    return xp.concatenate([x[t, :bs] for t, bs in enumerate(sizes)], axis=0)


def _unpack_impl(grad_output: Any, input_size: Sequence[int], lengths: Sequence[int],
                 batch_first: bool) -> Any:
    xp = namespace_of(grad_output)
    shape = tuple(input_size)
    tm_shape = (shape[1], shape[0], *shape[2:]) if batch_first else shape
    out = xp.zeros(tm_shape, dtype=grad_output.dtype)
    offset = 0
    for t, bs in enumerate(batch_sizes_of(lengths)):
        out[t, :bs] = grad_output[offset:offset + bs]
        offset += bs
    return xp.ascontiguousarray(_time_major(out, batch_first))


PACK = defop(
    "_pack_padded_sequence",
    impl=_pack_impl,
    inputs=("input",),
    params=("lengths", "batch_first"),
    vjp={"input": lambda grad, input_shape, lengths, batch_first: bind(
        UNPACK, (grad,), {"input_size": tuple(input_shape), "lengths": lengths,
                          "batch_first": batch_first})},
    jvp={"input": lambda t, lengths, batch_first: bind(
        PACK, (t,), {"lengths": lengths, "batch_first": batch_first})},
)
UNPACK = defop(
    "_pack_padded_sequence_backward",
    impl=_unpack_impl,
    inputs=("grad_output",),
    params=("input_size", "lengths", "batch_first"),
    vjp={"grad_output": lambda grad, lengths, batch_first: bind(
        PACK, (grad,), {"lengths": lengths, "batch_first": batch_first})},
    jvp="linear",
)


def pack(input: Tensor, lengths: Sequence[int], batch_first: bool) -> tuple[Tensor, Tensor]:
    """Bind the packing primitive: ``(data, batch_sizes)``, ``batch_sizes`` an int64 CPU
    tensor."""
    lens = tuple(int(n) for n in lengths)
    data = bind(PACK, (input,), {"lengths": lens, "batch_first": bool(batch_first)})
    return data, Tensor._make(batch_sizes_of(lens))


__all__ = ["PACK", "UNPACK", "pack", "batch_sizes_of"]
