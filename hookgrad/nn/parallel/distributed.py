"""`DistributedDataParallel`: data-parallel training with bucketed, hookable gradient reduction.

Example:
    >>> import hookgrad
    >>> import hookgrad.distributed as dist
    >>> from hookgrad.testing.distributed import run_ranks
    >>> def fn(rank, world_size):
    ...     hookgrad.manual_seed(rank)  # different init: DDP broadcasts rank 0's
    ...     model = DistributedDataParallel(hookgrad.nn.Linear(2, 1, bias=False))
    ...     model(hookgrad.ones(1, 2) * (rank + 1)).sum().backward()
    ...     return model.module.weight.grad.tolist()
    >>> run_ranks(fn, 2)
    [[[1.5, 1.5]], [[1.5, 1.5]]]
"""

from __future__ import annotations

import contextlib
import dataclasses
import inspect
import time
import warnings
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

import hookgrad.distributed as dist
from hookgrad._tensor import Tensor
from hookgrad.autograd.grad_mode import is_grad_enabled, no_grad
from hookgrad.futures import Future
from hookgrad.nn.modules.module import Module
from hookgrad.distributed._ddp_c10d import register_ddp_impl
from hookgrad.distributed.algorithms.join import Join, Joinable, _JoinConfig
from hookgrad.nn.parallel import _join
from hookgrad.nn.parallel._buckets import bucket_caps
from hookgrad.nn.parallel._reducer import Reducer

_NOT_FOUND_UNUSED = (
    "find_unused_parameters=True was specified in DDP constructor, but did not find any unused "
    "parameters in the forward pass. This flag results in an extra traversal of the autograd "
    "graph every iteration,  which can adversely affect performance. If your model indeed "
    "never has any unused parameters in the forward pass, consider turning this flag off. "
    "Note that this warning may be a false positive if your model has flow control causing "
    "later iterations to have unused parameters.")


class DistributedDataParallel(Module, Joinable):
    """Replicate ``module`` on every rank and average gradients across ranks in backward.

    Gradients are grouped into buckets; each bucket is reduced by the registered comm hook
    (`register_comm_hook`) or by an all-reduce mean, launched while backward still runs.

    Mirrors: ``torch.nn.parallel.DistributedDataParallel``.
    """

    def __init__(self, module: Module, device_ids: Any = None, output_device: Any = None,
                 dim: int = 0, broadcast_buffers: bool | None = None, init_sync: bool = True,
                 process_group: Any = None, bucket_cap_mb: float | None = None,
                 find_unused_parameters: bool = False, check_reduction: bool = False,
                 gradient_as_bucket_view: bool = False, static_graph: bool = False,
                 delay_all_reduce_named_params: Any = None, param_to_hook_all_reduce: Any = None,
                 mixed_precision: Any = None, device_mesh: Any = None,
                 skip_all_reduce_unused_params: bool = False,
                 bucket_cap_mb_list: list[float] | None = None, batched_grad_copy: bool = False,
                 forward_sync_buffers: bool | None = None) -> None:
        super().__init__()
        if mixed_precision is not None or delay_all_reduce_named_params is not None:
            raise NotImplementedError("hookgrad DDP: mixed_precision and "
                                      "delay_all_reduce_named_params are not supported")
        if device_ids is not None or output_device is not None:
            raise ValueError("DistributedDataParallel device_ids and output_device arguments "
                             "only work with single-device/multiple-device GPU modules; "
                             "hookgrad modules on the CPU need device_ids=None.")
        self.module = module
        self.process_group = dist.group.WORLD if process_group is None else process_group
        if self.process_group is None:
            raise ValueError("Default process group has not been initialized, please make "
                             "sure to call init_process_group.")
        ignored = set(getattr(module, "_ddp_params_and_buffers_to_ignore", ()))
        named = [(n, p) for n, p in module.named_parameters()
                 if p.requires_grad and n not in ignored]
        if not named:
            raise RuntimeError("DistributedDataParallel is not needed when a module doesn't "
                               "have any parameter that requires a gradient.")
        self._param_names = [n for n, _ in named]
        params = [p for _, p in named]
        self._buffers_to_sync = [b for n, b in module.named_buffers() if n not in ignored]
        sync = forward_sync_buffers if forward_sync_buffers is not None else broadcast_buffers
        self.broadcast_buffers = True if sync is None else bool(sync)
        self.find_unused_parameters = find_unused_parameters
        self.gradient_as_bucket_view, self.static_graph = gradient_as_bucket_view, static_graph
        self.require_backward_grad_sync = True
        self.dim = dim
        if init_sync:
            _verify_same_model(params, self.process_group)
            self._sync_params_and_buffers(params)
        caps = bucket_caps(bucket_cap_mb, bucket_cap_mb_list)
        self.reducer = Reducer(params, self.process_group, caps,
                               find_unused_parameters, static_graph, gradient_as_bucket_view,
                               explicit_caps=bucket_cap_mb_list is not None)
        self._comm_hook_registered = False
        self._warned_no_unused = False
        self._join_config = _JoinConfig.construct_disabled_join_config()
        self._divide_by_initial_world_size = True
        self._hook_handles = [
            p.register_post_accumulate_grad_hook(_ReadyHook(self.reducer, i))
            for i, p in enumerate(params)]

    # -- synchronisation ---------------------------------------------------------------------
    def _sync_params_and_buffers(self, params: list[Any]) -> None:
        """Broadcast rank 0's parameters then buffers, one flat message per dtype (§4 step 3)."""
        if self.process_group.size() == 1:
            return
        tensors = params + self._buffers_to_sync
        by_dtype: dict[Any, list[Any]] = {}
        for t in tensors:
            by_dtype.setdefault(t._data.dtype, []).append(t)
        for dtype, group in by_dtype.items():
            flat = np.concatenate([t._data.reshape(-1) for t in group]).astype(dtype)
            dist.broadcast(Tensor._make(flat), 0, group=self.process_group)
            offset = 0
            for t in group:
                n = t._data.size
                t._data[...] = flat[offset:offset + n].reshape(t._data.shape)
                offset += n

    def _sync_buffers(self) -> None:
        if self.broadcast_buffers and self._buffers_to_sync and self.process_group.size() > 1:
            for b in self._buffers_to_sync:
                dist.broadcast(b.detach(), 0, group=self.process_group)

    # -- forward -----------------------------------------------------------------------------
    def forward(self, *inputs: Any, **kwargs: Any) -> Any:
        """Run the module; prepare the reducer for the backward that follows (§5.1)."""
        grad_on = is_grad_enabled()
        self.reducer.divisor = self.process_group.size()
        self.reducer.stats.rebuilt_logged = self.reducer.stats.rebuilt  # as PyTorch logs it
        synced = False
        if self._join_config.enable:  # inside `with Join([ddp])` / `ddp.join()`
            synced = _join.pre_forward(self, grad_on)
        elif grad_on:
            self.reducer.rebuild_buckets()
        if not synced:
            with no_grad():
                self._sync_buffers()
        start = time.perf_counter_ns()
        output = self.module(*inputs, **kwargs)
        if grad_on and self.require_backward_grad_sync:
            self.reducer.stats.forward(start, time.perf_counter_ns())
            outputs = None
            if self.find_unused_parameters and not self.static_graph:
                outputs = _find_tensors(output)
            self.reducer.prepare_for_backward(outputs)
            if outputs is not None and not self.reducer.unused and not self._warned_no_unused:
                self._warned_no_unused = True
                warnings.warn(_NOT_FOUND_UNUSED, UserWarning, stacklevel=2)
        return output

    @contextlib.contextmanager
    def no_sync(self) -> Iterator[None]:
        """Skip gradient reduction for backward passes whose forward runs in this context.

        Mirrors: ``torch.nn.parallel.DistributedDataParallel.no_sync``.
        """
        old = self.require_backward_grad_sync
        self.require_backward_grad_sync = False
        try:
            yield
        finally:
            self.require_backward_grad_sync = old

    # -- comm hooks --------------------------------------------------------------------------
    def register_comm_hook(self, state: object, hook: Callable[..., Future]) -> None:
        """Reduce each bucket with ``hook(state, bucket) -> Future[Tensor]`` (§7).

        Raises:
            TypeError: If ``hook`` is not callable.
            ValueError: If its bucket or return annotation is not the expected type.
            RuntimeError: If a comm hook was already registered.

        Mirrors: ``torch.nn.parallel.DistributedDataParallel.register_comm_hook``.
        """
        _check_comm_hook(hook)
        if self._comm_hook_registered:
            raise RuntimeError("register_comm_hook or register_builtin_comm_hook can only be "
                               "called once.")
        self._comm_hook_registered = True
        self.reducer.comm_state, self.reducer.comm_hook = state, hook

    def join(self, divide_by_initial_world_size: bool = True, enable: bool = True,
             throw_on_early_termination: bool = False) -> Join:
        """A `Join` context for training with uneven inputs across ranks.

        Ranks that run out of batches shadow the others' collectives (contributing zero
        gradients) until every rank is done; then every rank gets the parameters of the last
        rank to finish. ``divide_by_initial_world_size=False`` averages each step over the
        ranks still training instead of the whole world.

        Mirrors: ``torch.nn.parallel.DistributedDataParallel.join``.
        """
        return Join([self], enable, throw_on_early_termination,
                    divide_by_initial_world_size=divide_by_initial_world_size)

    def join_hook(self, **kwargs: Any) -> _join.DDPJoinHook:
        """Mirrors: ``torch.nn.parallel.DistributedDataParallel.join_hook``."""
        return _join.DDPJoinHook(self, kwargs.get("divide_by_initial_world_size", True))

    @property
    def join_device(self) -> Any:
        """Mirrors: ``torch.nn.parallel.DistributedDataParallel.join_device``."""
        from hookgrad import _backend

        return _backend.device("cpu")

    @property
    def join_process_group(self) -> Any:
        """Mirrors: ``torch.nn.parallel.DistributedDataParallel.join_process_group``."""
        return self.process_group

    def _get_ddp_logging_data(self) -> dict[str, Any]:
        """Construction settings and runtime statistics, with PyTorch's keys.

        Mirrors: ``torch.nn.parallel.DistributedDataParallel._get_ddp_logging_data``.
        """
        return _logging_data(self)

    def _get_bucket_indices(self) -> list[list[int]]:
        return self.reducer.bucket_indices()

    def __getstate__(self) -> dict[str, Any]:
        raise RuntimeError("DistributedDataParallel is not picklable; save "
                           "ddp.module.state_dict() instead")


class _ReadyHook:
    """Post-accumulate-grad hook that reports parameter ``index`` ready to the reducer."""

    __slots__ = ("reducer", "index")

    def __init__(self, reducer: Reducer, index: int) -> None:
        self.reducer, self.index = reducer, index

    def __call__(self, param: Any) -> None:
        self.reducer.autograd_hook(self.index)


def _annotation_ok(annotation: Any, target: Any, names: tuple[str, ...]) -> bool:
    """Whether a (possibly string, under ``from __future__ import annotations``) annotation
    is absent or names ``target``."""
    if annotation is inspect.Parameter.empty or annotation == target:
        return True
    if isinstance(annotation, str):
        text = annotation.replace(" ", "")
        return any(text == n or text.endswith("." + n) for n in names)
    return False


def _check_comm_hook(hook: Any) -> None:
    if not callable(hook):
        raise TypeError("Communication hook must be callable.")
    sig = inspect.signature(hook)
    positional = [p for p in sig.parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    if len(positional) < 2 and not any(p.kind == p.VAR_POSITIONAL
                                       for p in sig.parameters.values()):
        raise TypeError("Communication hook must accept two positional arguments "
                        "(state, bucket).")
    bucket_ann = positional[1].annotation if len(positional) > 1 else inspect.Parameter.empty
    if not _annotation_ok(bucket_ann, dist.GradBucket, ("GradBucket",)):
        raise ValueError("Communication hook: bucket annotation should be dist.GradBucket.")
    if not _annotation_ok(sig.return_annotation, Future[Tensor],
                          ("Future[Tensor]", "Future[torch.Tensor]", "Future[hookgrad.Tensor]")):
        raise ValueError("Communication hook: return annotation should be "
                         "torch.futures.Future[torch.Tensor].")


def _verify_same_model(params: list[Any], group: Any) -> None:
    """Raise on every rank when parameter counts or shapes differ across ranks (§4 step 2)."""
    mine = (len(params), [list(p.shape) for p in params])
    everyone: list[Any] = [None] * group.size()
    dist.all_gather_object(everyone, mine, group=group)
    me = group.rank()
    for q, (count, _) in enumerate(everyone):
        if count != mine[0]:
            raise RuntimeError(
                f"DDP expects same model across all ranks, but Rank {me} has {mine[0]} params, "
                f"while rank {q} has inconsistent {count} params.")
    for q in ([0] if me != 0 else range(1, group.size())):
        for i, (a, b) in enumerate(zip(mine[1], everyone[q][1], strict=True)):
            if a != b:
                raise RuntimeError(
                    f"[{me}]: params[{i}] in this process with sizes {a} appears not to match "
                    f"sizes of the same param in process {q}.")


def _find_tensors(obj: Any) -> list[Any]:
    """Every tensor inside nested lists, tuples, dicts and dataclasses of a forward output."""
    if isinstance(obj, Tensor):
        return [obj]
    if isinstance(obj, list | tuple):
        return [t for item in obj for t in _find_tensors(item)]
    if isinstance(obj, dict):
        return [t for item in obj.values() for t in _find_tensors(item)]
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return [t for f in dataclasses.fields(obj) for t in _find_tensors(getattr(obj, f.name))]
    return []


_DTYPE_NAMES = {"float32": "float", "float64": "double", "float16": "c10::Half",
                "bfloat16": "c10::BFloat16", "int64": "long int", "int32": "int"}


def _logging_data(ddp: DistributedDataParallel) -> dict[str, Any]:
    """PyTorch's logging keys; ``N/A`` where the setting belongs to gloo/CUDA (absent here)."""
    reducer, group = ddp.reducer, ddp.process_group
    sizes = [b.numel() * b.flat.itemsize for b in reducer.buckets]
    dtypes = sorted({_DTYPE_NAMES.get(p._data.dtype.name, p._data.dtype.name)
                     for p in reducer.params})
    data: dict[str, Any] = {
        "backend_name": dist.get_backend(group), "broadcast_buffers": int(ddp.broadcast_buffers),
        "bucket_cap_bytes": reducer.caps[-1], "bucket_sizes": ", ".join(map(str, sizes)),
        "cuda_visible_devices": "N/A", "device_ids": "", "dtypes": ", ".join(dtypes),
        "find_unused_parameters": int(ddp.find_unused_parameters),
        "gloo_device_transport": "N/A", "gloo_num_threads": 0, "gloo_socket_ifname": "N/A",
        "gradient_as_bucket_view": int(ddp.gradient_as_bucket_view), "has_sync_bn": 0,
        "is_multi_device_module": 0, "master_addr": "N/A", "master_port": "N/A",
        "module_name": type(ddp.module).__name__,
        "num_parameter_tensors": len(reducer.params), "output_device": -1,
        "rank": dist.get_rank(group), "torch_distributed_debug": "N/A",
        "total_parameter_size_bytes": sum(int(p._data.nbytes) for p in reducer.params),
        "world_size": group.size(), "iteration": max(0, reducer.stats.iterations - 1)}
    if ddp.static_graph:
        data["static_graph"] = 1
    if ddp._comm_hook_registered:
        data["comm_hook"] = getattr(reducer.comm_hook, "__qualname__", str(reducer.comm_hook))
    if reducer.stats.iterations:
        data.update(reducer.stats.runtime(reducer))
    return data


# dist.Reducer / dist.Logger build on this reducer (hookgrad.distributed cannot import it back)
register_ddp_impl(Reducer, _logging_data)

# the names PyTorch's module exports (``from ... import *``)
__all__ = ["DistributedDataParallel"]
