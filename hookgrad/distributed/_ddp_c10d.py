"""`Reducer` and `Logger`: the c10d objects behind ``DistributedDataParallel``, for programs
that build them directly (custom data-parallel wrappers do).

`Reducer` is a front for hookgrad's own reducer (``nn/parallel/_reducer.py``, the one
`DistributedDataParallel` uses; registered here by ``nn.parallel``) over buckets the caller gives: it hooks every parameter's
gradient accumulation at construction, as c10d's does, and averages gradients across the group
during backward once ``prepare_for_backward`` armed it. `Logger` collects the construction
settings and reads the reducer's measured times into ``_get_ddp_logging_data``.
"""

from __future__ import annotations

from typing import Any

# DDP's reducer class and its logging-data function, registered by hookgrad.nn.parallel when it
# is imported (it imports this package, so this package cannot import it back)
_IMPL: dict[str, Any] = {}


def register_ddp_impl(reducer_cls: type, logging_data: Any) -> None:
    """Called once by ``hookgrad.nn.parallel.distributed``."""
    _IMPL.update(reducer=reducer_cls, logging_data=logging_data)


def _impl(name: str) -> Any:
    if name not in _IMPL:  # hookgrad imports nn.parallel at start-up; this is a safeguard
        raise RuntimeError("hookgrad.nn.parallel is not imported: import hookgrad first")
    return _IMPL[name]


class Reducer:
    """Bucketed gradient all-reduce of ``params`` over ``process_group``.

    ``bucket_indices`` lists the parameter indices of each bucket in reduction order (as
    ``DistributedDataParallel`` passes them). Gradients are averaged over the group unless a
    comm hook is registered (``_register_comm_hook``).

    Mirrors: ``torch.distributed.Reducer`` (construction, ``prepare_for_forward``,
    ``prepare_for_backward``, ``_rebuild_buckets``, ``_set_static_graph``,
    ``_remove_autograd_hooks``, ``_check_reducer_finalized``, ``_get_local_used_map``,
    ``set_logger``; not the CUDA/sparse/mixed-precision internals).
    """

    def __init__(self, params: list[Any], bucket_indices: list[list[int]],
                 per_bucket_size_limits: list[int], process_group: Any,
                 expect_sparse_gradients: list[bool] = (),  # type: ignore[assignment]
                 bucket_bytes_cap: int = 26214400, find_unused_parameters: bool = False,
                 gradient_as_bucket_view: bool = False,
                 param_to_name_mapping: dict[int, str] | None = None,
                 first_bucket_bytes_cap: int = 1048576,
                 skip_all_reduce_unused_params: bool = False, use_python_reducer: bool = False,
                 bucket_bytes_cap_list: list[int] = (),  # type: ignore[assignment]
                 batched_grad_copy: bool = False) -> None:
        params = list(params)
        covered = sorted(i for bucket in bucket_indices for i in bucket)
        if covered != list(range(len(params))):
            raise ValueError("bucket_indices must name every parameter index exactly once")
        caps = list(bucket_bytes_cap_list) or [first_bucket_bytes_cap, bucket_bytes_cap]
        self._impl = _impl("reducer")(params, process_group, caps, find_unused_parameters, False,
                           gradient_as_bucket_view, explicit_caps=True)
        self._impl._set_buckets([list(b) for b in bucket_indices])
        self._find_unused = find_unused_parameters
        self._logger: Logger | None = None
        self._handles = [p.register_post_accumulate_grad_hook(_Ready(self._impl, i))
                         for i, p in enumerate(params)]

    def prepare_for_forward(self) -> None:
        """Check that the previous backward finished its reduction.

        Mirrors: ``torch.distributed.Reducer.prepare_for_forward``.
        """
        self._impl.ensure_prior_reduction_finished()

    def prepare_for_backward(self, output: Any) -> None:
        """Arm the hooks for the next backward; with ``find_unused_parameters`` the parameters
        not reachable from ``output`` (a tensor or a list of them) count as ready at once.

        Mirrors: ``torch.distributed.Reducer.prepare_for_backward``.
        """
        outputs = list(output) if isinstance(output, (list, tuple)) else [output]
        self._impl.prepare_for_backward(outputs if self._find_unused else None)

    def _rebuild_buckets(self) -> bool:
        """Rebuild buckets once from the last backward's gradient-ready order.

        Mirrors: ``torch.distributed.Reducer._rebuild_buckets``.
        """
        return self._impl.rebuild_buckets()

    def _set_static_graph(self) -> None:
        """Mirrors: ``torch.distributed.Reducer._set_static_graph``."""
        self._impl.rebuild_due, self._impl.rebuild_skips = True, 1

    def _remove_autograd_hooks(self) -> None:
        """Mirrors: ``torch.distributed.Reducer._remove_autograd_hooks``."""
        for handle in self._handles:
            handle.remove()
        self._handles = []

    def _check_reducer_finalized(self) -> None:
        """Raises if a backward's reduction did not finish (unused parameters).

        Mirrors: ``torch.distributed.Reducer._check_reducer_finalized``.
        """
        self._impl.ensure_prior_reduction_finished()

    def _get_local_used_map(self) -> Any:
        """Per parameter: 1 if it got a gradient in the last backward.

        Mirrors: ``torch.distributed.Reducer._get_local_used_map``.
        """
        from hookgrad._tensor import Tensor

        return Tensor._make(self._impl.local_used.copy())

    def set_logger(self, logger: Logger) -> None:
        """Mirrors: ``torch.distributed.Reducer.set_logger``."""
        self._logger = logger


class _Ready:
    def __init__(self, impl: Any, index: int) -> None:
        self.impl, self.index = impl, index

    def __call__(self, param: Any) -> None:
        self.impl.autograd_hook(self.index)


def _register_comm_hook(reducer: Reducer, state: Any, comm_hook: Any) -> None:
    """Route ``reducer``'s buckets through ``comm_hook(state, bucket)``.

    Mirrors: ``torch.distributed._register_comm_hook``.
    """
    reducer._impl.comm_state, reducer._impl.comm_hook = state, comm_hook


class Logger:
    """DDP's logging record for one `Reducer`.

    Mirrors: ``torch.distributed.Logger``.
    """

    def __init__(self, reducer: Reducer) -> None:
        self._reducer = reducer
        self._settings: dict[str, Any] = {"module_name": "", "broadcast_buffers": 0}
        self._extra: dict[str, Any] = {}

    def set_construction_data_and_log(self, module_name: str, device_ids: list[int],
                                      output_device: int, broadcast_buffers: bool,
                                      has_sync_bn: bool, static_graph: bool) -> None:
        """Mirrors: ``torch.distributed.Logger.set_construction_data_and_log``."""
        self._settings = {"module_name": module_name, "broadcast_buffers": int(broadcast_buffers),
                          "has_sync_bn": int(has_sync_bn),
                          "device_ids": ", ".join(map(str, device_ids or [])),
                          "output_device": output_device}
        if static_graph:
            self._extra["static_graph"] = 1

    def set_runtime_stats_and_log(self) -> None:
        """Mirrors: ``torch.distributed.Logger.set_runtime_stats_and_log`` (the reducer
        measures as it runs; nothing to copy)."""

    def set_error_and_log(self, msg: str) -> None:
        """Mirrors: ``torch.distributed.Logger.set_error_and_log``."""
        self._extra.update({"has_error": 1, "error": msg})

    def _set_comm_hook_name(self, name: str) -> None:
        self._extra["comm_hook"] = name

    def _set_static_graph(self) -> None:
        self._extra["static_graph"] = 1

    def _set_uneven_input_join(self) -> None:
        self._extra["join_uneven_inputs"] = 1

    def _get_ddp_logging_data(self) -> dict[str, Any]:
        """PyTorch's DDP logging keys for this reducer.

        Mirrors: ``torch.distributed.Logger._get_ddp_logging_data``.
        """
        impl = self._reducer._impl
        view = _DDPView(impl, bool(self._settings["broadcast_buffers"]))
        data = _impl("logging_data")(view)
        data.update(self._settings)
        data.update(self._extra)
        return data


class _DDPView:
    """The attributes `_logging_data` reads from a DistributedDataParallel."""

    _comm_hook_registered = False
    static_graph = False
    module = None

    def __init__(self, impl: Any, broadcast_buffers: bool) -> None:
        self.reducer, self.process_group = impl, impl.group
        self.broadcast_buffers = broadcast_buffers
        self.find_unused_parameters = impl.find_unused
        self.gradient_as_bucket_view = impl.as_bucket_view
