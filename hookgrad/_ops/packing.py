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


def _pack_impl(input: Any, lengths: Sequence[int], batch_first: bool) -> tuple[Any, Any]:
    xp = namespace_of(input)
    x = _time_major(input, batch_first)
    sizes = batch_sizes_of(lengths)
    data = xp.concatenate([x[t, :bs] for t, bs in enumerate(sizes)], axis=0)
    return data, xp.asarray(sizes)


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
    num_outputs=2,
    nondifferentiable_outputs=(1,),
    vjp={"input": lambda grads, input_shape, lengths, batch_first: bind(
        UNPACK, (grads[0],), {"input_size": tuple(input_shape), "lengths": lengths,
                              "batch_first": batch_first})},
    jvp={"input": lambda t, lengths, batch_first: bind(
        PACK, (t,), {"lengths": lengths, "batch_first": batch_first})[0]},
)
UNPACK = defop(
    "_pack_padded_sequence_backward",
    impl=_unpack_impl,
    inputs=("grad_output",),
    params=("input_size", "lengths", "batch_first"),
    vjp={"grad_output": lambda grad, lengths, batch_first: bind(
        PACK, (grad,), {"lengths": lengths, "batch_first": batch_first})[0]},
    jvp="linear",
)


def pack(input: Tensor, lengths: Sequence[int], batch_first: bool) -> tuple[Tensor, Tensor]:
    """Bind the packing primitive: ``(data, batch_sizes)``."""
    return bind(PACK, (input,), {"lengths": tuple(int(n) for n in lengths),
                                 "batch_first": bool(batch_first)})


__all__ = ["PACK", "UNPACK", "pack", "batch_sizes_of"]
