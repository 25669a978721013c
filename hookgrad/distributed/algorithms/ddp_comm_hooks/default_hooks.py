"""Built-in DDP communication hooks: all-reduce, fp16/bf16 compression and wrappers (§8.1-8.3).

Example:
    >>> import hookgrad
    >>> from hookgrad.distributed.algorithms.ddp_comm_hooks import default_hooks
    >>> default_hooks.bf16_round(hookgrad.tensor([1.00390625, 3.0])).tolist()
    [1.0, 3.0]

Mirrors: ``torch.distributed.algorithms.ddp_comm_hooks.default_hooks``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from hookgrad.distributed import collectives as dist
from hookgrad.distributed.process_group import group
from hookgrad._dtypes import float16, float32
from hookgrad._tensor import Tensor
from hookgrad.distributed.grad_bucket import GradBucket
from hookgrad.futures import Future


def _group(process_group: Any) -> Any:
    return group.WORLD if process_group is None else process_group


def _allreduce_fut(process_group: Any, tensor: Any) -> Future:
    """Average ``tensor`` in place across the group; a future of the tensor."""
    pg = _group(process_group)
    tensor.div_(pg.size())
    work = dist.all_reduce(tensor, group=pg, async_op=True)
    return work.get_future().then(lambda fut: fut.value()[0])


def allreduce_hook(process_group: Any, bucket: GradBucket) -> Future[Tensor]:
    """Average the bucket across ranks: divide by the group size, then all-reduce SUM.

    Mirrors: ``torch.distributed.algorithms.ddp_comm_hooks.default_hooks.allreduce_hook``.
    """
    return _allreduce_fut(process_group, bucket.buffer())


def bf16_round(tensor: Any) -> Any:
    """Round float values to the nearest bfloat16 (ties to even), kept in float32.

    MPI has no bfloat16 type, so bf16 compression rounds the values and moves them as float32 (spec §8.2: not bit-identical to NCCL's bf16 sum).
    """
    a = np.ascontiguousarray(tensor._data, dtype=np.float32)
    bits = a.view(np.uint32)
    rounded = ((bits + (((bits >> 16) & 1) + np.uint32(0x7FFF))) & np.uint32(0xFFFF0000))
    rounded = np.where(np.isnan(a), bits, rounded).astype(np.uint32)
    return type(tensor)._make(rounded.view(np.float32).reshape(a.shape))


def _compress_hook(process_group: Any, bucket: GradBucket, low: str) -> Future[Tensor]:
    pg = _group(process_group)
    buffer = bucket.buffer()
    # Divide in float32, then round once: NumPy's float16 arithmetic is emulated and slow.
    # Equal to PyTorch's ``to(float16).div_(W)`` except for values at the float16 subnormal
    # boundary (W is a small integer).
    scaled = np.true_divide(buffer._data, pg.size(), dtype=np.float32)
    if low == "fp16":
        compressed = Tensor._make(scaled.astype(np.float16))
    else:
        compressed = bf16_round(Tensor._make(scaled))
    work = dist.all_reduce(compressed, group=pg, async_op=True)

    def decompress(fut: Future) -> Any:
        value = fut.value()[0]
        if low == "bf16":
            value = bf16_round(value)
        buffer._data[...] = value._data  # one cast back to the buffer's dtype
        buffer._vc().value += 1
        return buffer

    return work.get_future().then(decompress)


def fp16_compress_hook(process_group: Any, bucket: GradBucket) -> Future[Tensor]:
    """All-reduce the bucket cast to float16 (divided by the group size), cast back.

    Mirrors: ``torch.distributed.algorithms.ddp_comm_hooks.default_hooks.fp16_compress_hook``.
    """
    return _compress_hook(process_group, bucket, "fp16")


def bf16_compress_hook(process_group: Any, bucket: GradBucket) -> Future[Tensor]:
    """All-reduce the bucket rounded to bfloat16 (widened to float32 on the wire).

    PyTorch accepts it only on NCCL/XCCL; hookgrad supports it on every backend.

    Mirrors: ``torch.distributed.algorithms.ddp_comm_hooks.default_hooks.bf16_compress_hook``.
    """
    return _compress_hook(process_group, bucket, "bf16")


def _wrapper(hook: Callable[[Any, GradBucket], Future], low: str) -> Callable:
    def wrapped(hook_state: Any, bucket: GradBucket) -> Future[Tensor]:
        buffer = bucket.buffer()
        if low == "fp16":
            bucket.set_buffer(buffer.to(dtype=float16))
        else:
            bucket.set_buffer(bf16_round(buffer.to(dtype=float32)))
        fut = hook(hook_state, bucket)

        def decompress(f: Future) -> Any:
            out = bucket.buffer()
            value = f.value()
            out.copy_(bf16_round(value) if low == "bf16" else value)
            return out

        return fut.then(decompress)

    wrapped.__name__ = f"{low}_compress_wrapper_hook"
    return wrapped


def fp16_compress_wrapper(hook: Callable[[Any, GradBucket], Future]) -> Callable:
    """Run ``hook`` on a float16 copy of the bucket; the reducer casts the result back.

    Mirrors: ``torch.distributed.algorithms.ddp_comm_hooks.default_hooks.fp16_compress_wrapper``.
    """
    return _wrapper(hook, "fp16")


def bf16_compress_wrapper(hook: Callable[[Any, GradBucket], Future]) -> Callable:
    """Run ``hook`` on a bfloat16-rounded copy of the bucket (float32 storage in hookgrad).

    Mirrors: ``torch.distributed.algorithms.ddp_comm_hooks.default_hooks.bf16_compress_wrapper``.
    """
    return _wrapper(hook, "bf16")


__all__ = ["allreduce_hook", "bf16_compress_hook", "bf16_compress_wrapper", "bf16_round",
           "fp16_compress_hook", "fp16_compress_wrapper"]
