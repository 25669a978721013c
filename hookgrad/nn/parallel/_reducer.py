"""The DDP reducer: buckets of gradients, readiness, launch of comm hooks, finalize (§5).

Readiness comes from a post-accumulate-grad hook per parameter. Gradients are copied into the
flat buffer of their bucket; a bucket whose last gradient arrived is launched (its comm hook is
called) as soon as every lower-index bucket was launched. At the end of backward (an engine
final callback) every launched bucket's future is waited on, checked, and copied back into
``param.grad``. Collectives in flight are advanced at every readiness event and after every
node the engine runs (`poll_between_nodes`; no progress thread).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import numpy as np

import hookgrad.distributed as dist
from hookgrad._tensor import Tensor
from hookgrad.autograd.engine import poll_between_nodes, queue_callback
from hookgrad.distributed.grad_bucket import GradBucket
from hookgrad.futures import Future, future_type_name
from hookgrad.nn.parallel._buckets import MAXSIZE, compute_bucket_assignment_by_size

_UNUSED_MSG = (
    "Expected to have finished reduction in the prior iteration before starting a new one. "
    "This error indicates that your module has parameters that were not used in producing "
    "loss. You can enable unused parameter detection by passing the keyword argument "
    "`find_unused_parameters=True` to `torch.nn.parallel.DistributedDataParallel`, and by \n"
    "making sure all `forward` function outputs participate in calculating loss. \nIf you "
    "already have done the above, then the distributed data parallel module wasn't able to "
    "locate the output tensors in the return value of your module's `forward` function. Please "
    "include the loss function and the structure of the return value of `forward` of your "
    "module when reporting this issue (e.g. list, dict, iterable).\nParameter indices which did "
    "not receive grad for rank {rank}: {indices}\n In addition, you can set the environment "
    "variable TORCH_DISTRIBUTED_DEBUG to either INFO or DETAIL to print out information about "
    "which particular parameters did not receive gradient on this rank as part of this error")


class _Bucket:
    """One bucket: its parameters, a flat buffer, and per-parameter views into it."""

    def __init__(self, index: int, param_indices: list[int], params: list[Any]) -> None:
        self.index, self.param_indices = index, param_indices
        self.params = [params[i] for i in param_indices]
        dtype = self.params[0]._data.dtype
        sizes = [int(p._data.size) for p in self.params]
        self.offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(int).tolist()
        self.flat = np.zeros(self.offsets[-1], dtype=dtype)
        self.slots = [self.flat[a:b].reshape(p._data.shape) for a, b, p in
                      zip(self.offsets[:-1], self.offsets[1:], self.params, strict=True)]
        self.pending = 0
        self.future: Future | None = None

    def numel(self) -> int:
        return self.offsets[-1]


class _Stats:
    """Runtime statistics for `DistributedDataParallel._get_ddp_logging_data` (ns)."""

    def __init__(self) -> None:
        self.iterations = 0
        self.fwd_start = self.fwd_end = self.bwd_end = self.comm_start = 0
        self.buckets_reduced = 0
        self.ready_order: list[int] = []
        self.rebuilt = self.rebuilt_logged = False
        self.unused_bytes = 0

    def forward(self, start: int, end: int) -> None:
        self.iterations += 1
        self.fwd_start, self.fwd_end = start, end

    def runtime(self, reducer: Reducer) -> dict[str, Any]:
        fwd = self.fwd_end - self.fwd_start
        out: dict[str, Any] = {"forward_compute_time": fwd, "avg_forward_compute_time": fwd,
                               "forward_compute_time_start": self.fwd_start,
                               "has_rebuilt_buckets": int(self.rebuilt_logged),
                               "unused_parameter_size": self.unused_bytes}
        if self.bwd_end:
            bwd, comm = self.comm_start - self.fwd_end, self.bwd_end - self.comm_start
            out.update({
                "backward_compute_time": bwd, "avg_backward_compute_time": bwd,
                "backward_compute_time_start": self.fwd_end,
                "backward_compute_time_end": self.comm_start,
                "backward_comm_time": comm, "avg_backward_comm_time": comm,
                "backward_comm_time_start": self.comm_start,
                "backward_comm_time_end": self.bwd_end,
                # transfers overlap compute only while polled between nodes: not measured
                "backward_compute_comm_overlap_time": 0,
                "avg_backward_compute_comm_overlap_time": 0,
                "num_buckets_reduced": self.buckets_reduced,
                "prev_iteration_grad_ready_order_indices": ", ".join(map(str,
                                                                         self.ready_order))})
        return out


class Reducer:
    """Gradient bucketing and reduction for one `DistributedDataParallel`."""

    def __init__(self, params: list[Any], group: Any, caps: list[int],
                 find_unused: bool, static_graph: bool, as_bucket_view: bool,
                 explicit_caps: bool = False) -> None:
        self.params, self.group = params, group
        self.world = group.size()
        self.divisor = self.world  # ranks averaged over (fewer under Join, see _join.py)
        self.stats = _Stats()
        self.caps = list(caps)  # byte caps of buckets 0, 1, ... (the last one repeats)
        self.find_unused, self.as_bucket_view = find_unused, as_bucket_view
        self.rebuild_due = static_graph or not find_unused
        # PyTorch 2.13 with static_graph=True rebuilds one iteration later (at the third
        # forward, from the second backward's ready order), not at the second forward.
        self.rebuild_skips = 1 if static_graph else 0
        # iteration 0: one bucket unless unused parameters are expected, or the caller gave
        # every bucket's cap (bucket_cap_mb_list: PyTorch 2.13 uses the list from the start)
        limits = [MAXSIZE] if self.rebuild_due and not explicit_caps else self.caps
        assignment = compute_bucket_assignment_by_size(params, limits)[0]
        self._set_buckets(list(reversed(assignment)))
        self.comm_hook: Callable | None = None
        self.comm_state: Any = None
        self.expect_hooks = False  # set by prepare_for_backward, cleared by finalize
        self.require_finalize = False
        self.ready_order: list[int] = []
        self.iteration_order: list[int] = []  # this iteration's ready order (logging data)
        self.unused: list[int] = []
        self.local_used = np.zeros(len(params), dtype=np.int32)
        self.ready = np.zeros(len(params), dtype=bool)
        self.next_launch = 0
        self.marked_unused = False

    def _set_buckets(self, assignment: list[list[int]]) -> None:
        self.buckets = [_Bucket(k, idx, self.params) for k, idx in enumerate(assignment)]
        self.where = {}
        for b in self.buckets:
            for slot, i in enumerate(b.param_indices):
                self.where[i] = (b, slot)

    def bucket_indices(self) -> list[list[int]]:
        """Parameter indices of every bucket, in bucket order (for tests and logging)."""
        return [list(b.param_indices) for b in self.buckets]

    # -- per-iteration preparation ----------------------------------------------------------
    def ensure_prior_reduction_finished(self) -> None:
        if self.require_finalize:
            missing = [i for i in range(len(self.params)) if not self.ready[i]]
            self.require_finalize = self.expect_hooks = False
            raise RuntimeError(_UNUSED_MSG.format(rank=dist.get_rank(self.group),
                                                  indices=" ".join(map(str, missing))))

    def rebuild_buckets(self) -> bool:
        """Recompute buckets from last backward's ready order, once (§4.3)."""
        self.ensure_prior_reduction_finished()
        if not self.rebuild_due or len(self.ready_order) != len(self.params):
            return False
        if self.rebuild_skips:
            self.rebuild_skips -= 1
            self.ready_order.clear()
            return False
        order = list(self.ready_order)
        groups = compute_bucket_assignment_by_size([self.params[i] for i in order],
                                                   self.caps)[0]
        self._set_buckets([[order[j] for j in g] for g in groups])
        self.rebuild_due = False
        self.stats.rebuilt = True
        return True

    def prepare_for_backward(self, outputs: list[Any] | None) -> None:
        self.expect_hooks = True
        self.require_finalize = False
        self.next_launch, self.marked_unused = 0, False
        self.ready[:] = False
        self.local_used[:] = 0
        for b in self.buckets:
            b.pending, b.future = len(b.params), None
        self.unused = [] if outputs is None else _unreachable(self.params, outputs)
        self.iteration_order: list[int] = []
        self.stats.unused_bytes = sum(int(self.params[i]._data.nbytes) for i in self.unused)

    # -- readiness ---------------------------------------------------------------------------
    def autograd_hook(self, index: int) -> None:
        """The post-accumulate-grad hook body of parameter ``index``."""
        if not self.expect_hooks or self.ready[index]:
            return
        if not self.require_finalize:
            self.require_finalize = True
            queue_callback(self.finalize)
            poll_between_nodes(self._progress)
        if not self.marked_unused:
            self.marked_unused = True
            for i in self.unused:
                self._mark_ready(i, used=False)
        self._mark_ready(index, used=True)
        dist.progress(self.group)

    def _progress(self) -> None:
        dist.progress(self.group)

    def _mark_ready(self, index: int, used: bool) -> None:
        bucket, slot = self.where[index]
        grad = self.params[index].grad
        view = bucket.slots[slot]
        if not used or grad is None:
            view[...] = 0
        elif grad._data is not view:
            view[...] = grad._data
        if used and self.comm_hook is None:
            view /= self.divisor
        self.local_used[index] = int(used)
        self.ready[index] = True
        self.iteration_order.append(index)
        if self.rebuild_due:
            self.ready_order.append(index)
        bucket.pending -= 1
        while self.next_launch < len(self.buckets) and \
                self.buckets[self.next_launch].pending == 0:
            self._launch(self.buckets[self.next_launch])
            self.next_launch += 1

    def _launch(self, bucket: _Bucket) -> None:
        buffer = Tensor._make(bucket.flat)
        grads = [Tensor._make(s) for s in bucket.slots]
        gb = GradBucket(bucket.index, buffer, grads, list(bucket.params),
                        bucket.index == len(self.buckets) - 1)
        if self.comm_hook is None:
            work = dist.all_reduce(buffer, group=self.group, async_op=True)
            fut = work.get_future().then(lambda f: f.value()[0])
        else:
            fut = self.comm_hook(self.comm_state, gb)
        if not isinstance(fut, Future):
            self.expect_hooks = self.require_finalize = False
            raise RuntimeError(
                f"DDP communication hook's callback must return a {future_type_name()} "
                f"object, but got {type(fut).__module__}.{type(fut).__qualname__}")
        bucket.future = fut

    # -- end of backward ---------------------------------------------------------------------
    def finalize(self) -> None:
        """Wait for every bucket, check its result, write the averaged gradients (§5.4)."""
        if not self.require_finalize:
            return
        if self.next_launch < len(self.buckets):
            return  # some parameter never became ready: reported at the next forward
        self.expect_hooks = self.require_finalize = False
        self.stats.comm_start = time.perf_counter_ns()
        used = self.local_used
        if self.find_unused:
            used = Tensor._make(self.local_used.copy())
            dist.all_reduce(used, op=dist.ReduceOp.MAX, group=self.group)
            used = used._data
        for bucket in self.buckets:
            assert bucket.future is not None
            result = _checked(bucket.future.wait(), bucket)
            for slot, index in enumerate(bucket.param_indices):
                if used[index]:
                    a, b = bucket.offsets[slot], bucket.offsets[slot + 1]
                    self._write_grad(index, result[a:b], bucket.slots[slot])
        self.stats.bwd_end = time.perf_counter_ns()
        self.stats.buckets_reduced = len(self.buckets)
        self.stats.ready_order = list(self.iteration_order)

    def _write_grad(self, index: int, values: np.ndarray, slot: np.ndarray) -> None:
        param = self.params[index]
        shape, dtype = param._data.shape, param._data.dtype
        if self.as_bucket_view:
            if values.ctypes.data != slot.ctypes.data or values.dtype != dtype:
                slot[...] = values.reshape(shape)
            if param.grad is None or param.grad._data is not slot:
                param.grad = Tensor._make(slot)
            return
        if param.grad is None:
            param.grad = Tensor._make(values.reshape(shape).astype(dtype, copy=True))
        else:
            param.grad._data[...] = values.reshape(shape)


def _checked(result: Any, bucket: _Bucket) -> np.ndarray:
    if isinstance(result, Tensor):
        n = int(result._data.size)
        if n == bucket.numel():
            return result._data.reshape(-1)
    else:
        n = len(result) if isinstance(result, list | tuple) else 0
    raise RuntimeError(f"Communication hook result has {n} elements, expected "
                       f"{bucket.numel()} (the size of bucket {bucket.index})")


def _unreachable(params: list[Any], outputs: list[Any]) -> list[int]:
    """Indices of ``params`` whose AccumulateGrad node no output's graph reaches."""
    seen, stack, reached = set(), [], set()
    for out in outputs:
        fn = getattr(out, "grad_fn", None)
        if fn is not None:
            stack.append(fn)
        elif getattr(out, "requires_grad", False):
            reached.add(id(out))
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        var = getattr(node, "variable", None)
        if var is not None:
            reached.add(id(var))
        stack.extend(nxt for nxt, _ in node.next_functions if nxt is not None)
    return [i for i, p in enumerate(params) if id(p) not in reached]
