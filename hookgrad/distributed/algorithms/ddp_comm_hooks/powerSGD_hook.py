"""PowerSGD gradient compression (Vogels et al., 2019) as a DDP comm hook (spec §8.5).

Each compressible gradient matrix ``M`` (``n x m``) is replaced by a rank-``r`` approximation
``P Q^T``: ``P = M Q`` is all-reduced and orthogonalised, ``Q = M^T P`` is all-reduced and
averaged. Error feedback adds what compression lost last time; warm start reuses ``Q``.

Mirrors: ``torch.distributed.algorithms.ddp_comm_hooks.powerSGD_hook``.
"""

from __future__ import annotations

import logging
import warnings
from collections import defaultdict
from typing import Any

import numpy as np

from hookgrad.distributed import collectives as dist
from hookgrad.distributed.process_group import group
from hookgrad._dtypes import to_dtype
from hookgrad._functional.random import Generator, randn
from hookgrad._tensor import Tensor
from hookgrad.distributed.algorithms.ddp_comm_hooks.default_hooks import _allreduce_fut
from hookgrad.distributed.grad_bucket import GradBucket
from hookgrad.futures import Future

logger = logging.getLogger(__name__)


def _orthogonalize(matrices: np.ndarray, epsilon: float = 0.0) -> None:
    """Orthonormalise the columns of each ``n x r`` matrix of a batch, in place."""
    r = matrices.shape[2]
    if r <= 2 or matrices.dtype == np.float16:
        for i in range(r):
            col = matrices[:, :, i:i + 1]
            with np.errstate(divide="ignore", invalid="ignore"):
                col /= np.linalg.norm(col, axis=1, keepdims=True) + epsilon
            if i + 1 < r:
                rest = matrices[:, :, i + 1:]
                rest -= np.sum(col * rest, axis=1, keepdims=True) * col
    else:
        matrices[...] = np.linalg.qr(matrices)[0]


def _should_compress(n: int, m: int, r: int, min_rate: float) -> tuple[bool, int, int]:
    before, after = n * m, (n + m) * r
    return after * min_rate < before, before, after


class PowerSGDState:
    """Hyper-parameters and per-bucket memories of `powerSGD_hook`.

    Raises:
        ValueError: If error feedback or warm start is on and ``start_powerSGD_iter <= 1``.

    Mirrors: ``torch.distributed.algorithms.ddp_comm_hooks.powerSGD_hook.PowerSGDState``.
    """

    def __init__(self, process_group: Any, matrix_approximation_rank: int = 1,
                 start_powerSGD_iter: int = 1_000, min_compression_rate: float = 2,
                 use_error_feedback: bool = True, warm_start: bool = True,
                 orthogonalization_epsilon: float = 0, random_seed: int = 0,
                 compression_stats_logging_frequency: int = 10_000,
                 batch_tensors_with_same_shape: bool = False) -> None:
        if (use_error_feedback or warm_start) and start_powerSGD_iter <= 1:
            raise ValueError(
                "Expect `start_powerSGD_iter` > 1 if `use_error_feedback` or `warm_start` is "
                "enabled, because PowerSGD can only be applied after the first two iterations "
                "in DDP.")
        self.process_group = process_group
        self.matrix_approximation_rank = matrix_approximation_rank
        self.start_powerSGD_iter = start_powerSGD_iter
        self.min_compression_rate = min_compression_rate
        self.use_error_feedback, self.warm_start = use_error_feedback, warm_start
        self.orthogonalization_epsilon = orthogonalization_epsilon
        self.rng = np.random.RandomState(random_seed)
        self.error_dict: dict[int, Tensor] = {}
        self.p_memory_dict: dict[int, Tensor] = {}
        self.q_memory_dict: dict[int, Tensor] = {}
        self.iter = 0
        self.total_numel_before_compression = 0
        self.total_numel_after_compression = 0
        self.compression_stats_logging_frequency = max(1, compression_stats_logging_frequency)
        self.next_stats_report = 0
        self.batch_tensors_with_same_shape = batch_tensors_with_same_shape

    def __getstate__(self) -> dict[str, Any]:
        warnings.warn("NOTE: Process group is not serializable and excluded from a saved "
                      "state.", stacklevel=2)
        return {k: v for k, v in self.__dict__.items() if k != "process_group"}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self.process_group = group.WORLD
        warnings.warn("NOTE: Process group will be set to a default group (i.e. the world "
                      "size). If a different group is desired, please set "
                      "`self.process_group` after PowerSGD state is loaded.", stacklevel=2)

    def maybe_increase_iter(self, bucket: GradBucket) -> None:
        """Count an iteration when the last bucket of one was handled."""
        if bucket.is_last():
            self.iter += 1
        if self.iter == self.start_powerSGD_iter and bucket.is_last():
            logger.info("Start to apply PowerSGD after %s iterations.", self.iter)

    def compression_stats(self) -> tuple[float, int, int]:
        """``(rate, numel before, numel after)`` over every compressed call so far."""
        before, after = self.total_numel_before_compression, self.total_numel_after_compression
        return (before / after if after > 0 else 0, before, after)


def _as_tensor(arr: np.ndarray) -> Tensor:
    return Tensor._make(arr)


def _split(state: PowerSGDState, grads: list[np.ndarray]) -> tuple[list, list, int, int]:
    """Matrices to compress (``n x m`` views), uncompressed arrays, and P/Q memory sizes."""
    compress, plain, p_size, q_size = [], [], 0, 0
    for g in grads:
        mat = g.reshape(g.shape[0], -1) if g.ndim else g.reshape(1, 1)
        n, m = mat.shape
        r = min(n, m, state.matrix_approximation_rank)
        ok, before, after = _should_compress(n, m, r, state.min_compression_rate)
        state.total_numel_before_compression += before
        if ok:
            compress.append(mat)
            p_size, q_size = p_size + n * r, q_size + m * r
            state.total_numel_after_compression += after
        else:
            plain.append(g)
            state.total_numel_after_compression += before
    return compress, plain, p_size, q_size


def _batches(state: PowerSGDState, mats: list[np.ndarray]) -> list[tuple[np.ndarray, list]]:
    """``(batch B x n x m, [matrices it stands for])`` grouped by shape, first-seen order."""
    by_shape: dict[tuple, list[np.ndarray]] = defaultdict(list)
    for mat in mats:
        by_shape[mat.shape].append(mat)
    out = []
    for group in by_shape.values():
        if state.batch_tensors_with_same_shape:
            out.append((np.stack(group), group))
        else:
            out.extend((mat[None], [mat]) for mat in group)
    return out


def _views(memory: np.ndarray, batches: list, dim: int, rank: int) -> list[np.ndarray]:
    views, idx = [], 0
    for batch, _ in batches:
        b, side = batch.shape[0], batch.shape[dim]
        r = min(batch.shape[1], batch.shape[2], rank)
        views.append(memory[idx:idx + b * side * r].reshape(b, side, r))
        idx += b * side * r
    return views


def _shared_normals(seed: int, shapes: list, np_dtype: Any) -> list[np.ndarray]:
    """Standard normals of `shapes` as PyTorch draws them for the hook: ``manual_seed(seed)``
    then one ``randn`` per shape, on a forked generator (the global stream is untouched). The
    same seed on every rank gives every rank the same values, PyTorch's values."""
    g = Generator().manual_seed(seed)
    dtype = to_dtype(np.dtype(np_dtype))
    return [randn(*shape, generator=g, dtype=dtype)._data for shape in shapes]


def _first_projection(state: PowerSGDState, k: int, batches: list, fresh: bool
                      ) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """P and Q views into the bucket's memories; Q random (same on every rank: shared seed and
    call order) when fresh, orthogonalised; then ``P = M Q``."""
    rank = state.matrix_approximation_rank
    ps = _views(state.p_memory_dict[k]._data, batches, 1, rank)
    qs = _views(state.q_memory_dict[k]._data, batches, 2, rank)
    if fresh:
        draws = _shared_normals(state.rng.randint(1_000_000_000),
                                [q.shape for q in qs], qs[0].dtype if qs else np.float32)
        for q, values in zip(qs, draws, strict=True):
            q[...] = values
    for q in qs:
        _orthogonalize(q, state.orthogonalization_epsilon)
    for (batch, _), q, p in zip(batches, qs, ps, strict=True):
        np.matmul(batch, q, out=p)
    return ps, qs


def powerSGD_hook(state: PowerSGDState, bucket: GradBucket) -> Future[Tensor]:  # noqa: N802
    """Low-rank (rank ``state.matrix_approximation_rank``) compressed gradient all-reduce.

    Exact all-reduce (mean) while ``state.iter < start_powerSGD_iter``.

    Mirrors: ``torch.distributed.algorithms.ddp_comm_hooks.powerSGD_hook.powerSGD_hook``.
    """
    pg = group.WORLD if state.process_group is None else state.process_group
    world = pg.size()
    buffer = bucket.buffer()
    if state.iter < state.start_powerSGD_iter:
        state.maybe_increase_iter(bucket)
        return _allreduce_fut(pg, buffer)
    k, flat = bucket.index(), buffer._data
    if state.use_error_feedback:
        if k in state.error_dict:
            flat += state.error_dict[k]._data
        else:
            state.error_dict[k] = _as_tensor(np.zeros_like(flat))
        original = flat.copy()
    mats, plain, p_size, q_size = _split(state, [g._data for g in bucket.gradients()])
    plain_mem = np.concatenate([p.reshape(-1) for p in plain]) if plain else flat[:0].copy()
    fresh = not state.warm_start or k not in state.p_memory_dict
    if fresh:
        state.p_memory_dict[k] = _as_tensor(np.empty(p_size, dtype=flat.dtype))
        state.q_memory_dict[k] = _as_tensor(np.empty(q_size, dtype=flat.dtype))
    batches = _batches(state, mats)
    eps = state.orthogonalization_epsilon
    ps, qs = _first_projection(state, k, batches, fresh)

    def allreduce_ps(fut: Future) -> Any:
        reduced = fut.value()[0]._data / world
        idx = 0
        for p in plain:
            p[...] = reduced[idx:idx + p.size].reshape(p.shape)
            idx += p.size
        return dist.all_reduce(state.p_memory_dict[k], group=pg, async_op=True) \
            .get_future().wait()[0]

    def compute_qs(fut: Future) -> Any:
        for p in ps:
            _orthogonalize(p, eps)
        for (batch, _), p, q in zip(batches, ps, qs, strict=True):
            np.matmul(batch.transpose(0, 2, 1), p, out=q)
        return dist.all_reduce(state.q_memory_dict[k], group=pg, async_op=True) \
            .get_future().wait()[0]

    def decompress(fut: Future) -> Any:
        state.q_memory_dict[k]._data /= world
        for (batch, originals), p, q in zip(batches, ps, qs, strict=True):
            np.matmul(p, q.transpose(0, 2, 1), out=batch)
            for i, mat in enumerate(originals):
                mat[...] = batch[i]
        if state.use_error_feedback:
            state.error_dict[k] = _as_tensor(original - flat)
        if not state.warm_start:
            state.p_memory_dict.clear()
            state.q_memory_dict.clear()
        state.maybe_increase_iter(bucket)
        return buffer

    first = dist.all_reduce(_as_tensor(plain_mem), group=pg, async_op=True).get_future()
    return first.then(allreduce_ps).then(compute_qs).then(decompress)


def batched_powerSGD_hook(state: PowerSGDState, bucket: GradBucket  # noqa: N802
                          ) -> Future[Tensor]:
    """PowerSGD on the whole bucket seen as one square matrix (side ``ceil(sqrt(numel))``,
    zero-padded): one P and one Q per bucket; Q is orthogonalised at every call.

    Mirrors: ``torch.distributed.algorithms.ddp_comm_hooks.powerSGD_hook.batched_powerSGD_hook``.
    """
    pg = group.WORLD if state.process_group is None else state.process_group
    world, buffer = pg.size(), bucket.buffer()
    if state.iter < state.start_powerSGD_iter:
        state.maybe_increase_iter(bucket)
        return _allreduce_fut(pg, buffer)
    flat, k, r = buffer._data, bucket.index(), state.matrix_approximation_rank
    n = flat.size
    side = int(np.ceil(np.sqrt(n)))
    state.total_numel_before_compression += n
    state.total_numel_after_compression += side * r * 2
    padded = np.zeros(side * side, dtype=flat.dtype)
    padded[:n] = flat
    if state.use_error_feedback:
        if k in state.error_dict:
            padded += state.error_dict[k]._data
        else:
            state.error_dict[k] = _as_tensor(np.zeros_like(padded))
        original = padded.copy()
    matrix = padded.reshape(side, side)
    if not state.warm_start or k not in state.p_memory_dict:
        state.p_memory_dict[k] = _as_tensor(np.empty((side, r), dtype=flat.dtype))
        (values,) = _shared_normals(state.rng.randint(1_000_000_000), [(side, r)], flat.dtype)
        state.q_memory_dict[k] = _as_tensor(values)
    p, q = state.p_memory_dict[k]._data, state.q_memory_dict[k]._data
    _orthogonalize(q[None], state.orthogonalization_epsilon)
    np.matmul(matrix, q, out=p)

    def compute_q(fut: Future) -> Any:
        _orthogonalize(p[None], state.orthogonalization_epsilon)
        np.matmul(matrix.T, p, out=q)
        return dist.all_reduce(state.q_memory_dict[k], group=pg, async_op=True) \
            .get_future().wait()[0]

    def decompress(fut: Future) -> Any:
        np.divide(q, world, out=q)
        np.matmul(p, q.T, out=matrix)
        if state.use_error_feedback:
            state.error_dict[k] = _as_tensor(original - padded)
        if not state.warm_start:
            state.p_memory_dict.clear()
            state.q_memory_dict.clear()
        flat[...] = padded[:n]
        state.maybe_increase_iter(bucket)
        return buffer

    first = dist.all_reduce(state.p_memory_dict[k], group=pg, async_op=True).get_future()
    return first.then(compute_q).then(decompress)


__all__ = ["PowerSGDState", "batched_powerSGD_hook", "powerSGD_hook"]
