"""Activation checkpointing: keep only a function's inputs, recompute the rest in backward.

Mirrors: ``torch.utils.checkpoint`` (``checkpoint`` in both variants, ``checkpoint_sequential``).

NOTE [Checkpoint]
Non-reentrant (``use_reentrant=False``) is built on saved-tensor hooks. During the checkpointed
forward every tensor a node would save is replaced by its position (the pack hook returns an
int). The first unpack in a backward pass re-runs the function once, with grad mode on, the same
RNG state and a pack hook that *keeps* tensors in the same order; like PyTorch's early stop it
stops as soon as the last needed tensor is kept, so later ops and forward hooks do not run a
second time. Each kept tensor is handed out once and then dropped (recomputed activations do
not outlive the pass), and another pass over a retained graph recomputes again, as PyTorch's
per-graph-task frames do. Saved values are recomputed in the same order because the function
is deterministic given the RNG state, exactly the assumption PyTorch makes.

Reentrant (``use_reentrant=True``, PyTorch's default when the argument is omitted) is PyTorch's
``CheckpointFunction``: an `autograd.Function` runs the function under ``no_grad`` and saves only
its inputs; its backward re-runs the function on detached inputs and calls ``backward`` inside
backward. As in PyTorch it always recomputes, takes no keyword arguments for the function and
refuses ``autograd.grad`` / ``backward(inputs=...)``.
"""

from __future__ import annotations

import contextlib
import enum
import warnings
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from hookgrad._functional.random import get_rng_state, set_rng_state
from hookgrad._tensor import Tensor
from hookgrad.autograd._api import backward as _backward
from hookgrad.autograd._saved import SavedTensor  # noqa: F401 - PyTorch's module exports it
from hookgrad.autograd.engine import current_graph_task, current_graph_task_id
from hookgrad.autograd.function import Function
from hookgrad.autograd.grad_mode import enable_grad, no_grad
from hookgrad.autograd.saved_hooks import saved_tensors_hooks
from hookgrad._functorch.pytree_util import tree_flatten, tree_map  # noqa: F401 - PyTorch's too
from hookgrad.utils._python_dispatch import TorchDispatchMode  # noqa: F401 - PyTorch's too

__all__ = [
    "checkpoint", "checkpoint_sequential", "CheckpointError", "CheckpointFunction",
    "set_checkpoint_early_stop", "set_checkpoint_debug_enabled", "noop_context_fn",
    "detach_variable", "check_backward_validity", "get_device_states",
    "set_device_states", "DefaultDeviceType", "CheckpointPolicy",
    "SelectiveCheckpointContext"
]

_REENTRANT_WARNING = (
    "torch.utils.checkpoint: the use_reentrant parameter should be passed explicitly. Starting "
    "in PyTorch 2.9, calling checkpoint without use_reentrant will raise an exception. "
    "use_reentrant=False is recommended, but if you need to preserve the current default "
    "behavior, you can pass use_reentrant=True. Refer to docs for more details on the "
    "differences between the two variants."
)
_SEQUENTIAL_WARNING = (
    "torch.utils.checkpoint.checkpoint_sequential: the use_reentrant parameter should be passed "
    "explicitly. In version 2.9 we will raise an exception if use_reentrant is not passed. "
    "use_reentrant=False is recommended, but if you need to preserve the current default "
    "behavior, you can pass use_reentrant=True. Refer to docs for more details on the "
    "differences between the two variants."
)
_UNPACKED_TWICE = (
    "torch.utils.checkpoint: Unpack is being triggered for a tensor that was already unpacked "
    "once. If you are calling ctx.saved_tensors in backward, make sure to do so only once. "
    "Otherwise please open an issue with details on your use case."
)
_REENTRANT_GRAD = (
    "When use_reentrant=True, torch.utils.checkpoint is incompatible with .grad() or passing an "
    "`inputs` parameter to .backward(). To resolve this error, you can either set "
    "use_reentrant=False, or call .backward() without passing the `inputs` argument."
)


_EARLY_STOP = [True]


class set_checkpoint_early_stop:  # noqa: N801 - PyTorch's name
    """Context manager choosing whether non-reentrant recomputation stops early (default on).

    With it off, recomputation runs the whole checkpointed function (its later ops and forward
    hooks run again). Only checkpoints whose forward runs inside the context are affected.

    Mirrors: ``torch.utils.checkpoint.set_checkpoint_early_stop``.
    """

    def __init__(self, enable: bool) -> None:
        self.enable = enable
        self.prev = _EARLY_STOP[0]

    def __enter__(self) -> None:
        self.prev = _EARLY_STOP[0]
        _EARLY_STOP[0] = self.enable

    def __exit__(self, *args: object) -> None:
        _EARLY_STOP[0] = self.prev


class CheckpointError(RuntimeError):
    """Misuse of a non-reentrant checkpoint. Mirrors: ``torch.utils.checkpoint.CheckpointError``."""


class _StopRecomputation(Exception):
    """Raised by the recomputation's pack hook once every needed tensor has been kept."""


def checkpoint(function: Callable[..., Any], *args: Any, use_reentrant: bool | None = None,
               context_fn: Callable[[], tuple[Any, Any]] = None,  # type: ignore[assignment]
               determinism_check: str = "default", debug: bool = False,
               preserve_rng_state: bool = True, **kwargs: Any) -> Any:
    """Run `function(*args, **kwargs)` without keeping its saved tensors (NOTE [Checkpoint]).

    Args:
        function: the computation to checkpoint (must be deterministic given the RNG state).
        use_reentrant: pass it explicitly, as PyTorch asks (a UserWarning otherwise, and the
            reentrant variant, PyTorch's default).
        context_fn: non-reentrant only: returns two context managers, entered around the
            forward and around the recomputation.
        determinism_check: ``"default"`` compares shape, dtype and device of each recomputed
            saved tensor with the forward's (`CheckpointError` on a difference); ``"none"``.
        debug: accepted as PyTorch does (non-reentrant only); hookgrad's messages carry no
            extra operator trace.
        preserve_rng_state: restore the RNG state for the recomputation (dropout masks match).

    Returns:
        What `function` returns, connected to the graph as if it ran normally.

    Raises:
        ValueError: keyword arguments for `function`, `context_fn` or `debug` with the
            reentrant variant; an unknown `determinism_check`.
    """
    context_fn = noop_context_fn if context_fn is None else context_fn
    if use_reentrant is None:
        warnings.warn(_REENTRANT_WARNING, UserWarning, stacklevel=2)
        use_reentrant = True
    if use_reentrant:
        if context_fn is not noop_context_fn or debug is not False:
            raise ValueError("Passing `context_fn` or `debug` is only supported when "
                             "use_reentrant=False.")
        if kwargs:
            raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))
        return CheckpointFunction.apply(function, preserve_rng_state, *args)
    if determinism_check not in ("default", "none"):
        raise ValueError("determinism_check should be one of ['default', 'none'], but got "
                         f"{determinism_check}")
    return _checkpoint_without_reentrant(function, preserve_rng_state, args, kwargs,
                                         context_fn, determinism_check == "default")


def _meta(t: Any) -> dict:
    return {"shape": t.shape, "dtype": t.dtype, "device": t.device}


def _check_recomputed(saved: list, kept: list) -> None:
    bad = [i for i, (m, t) in enumerate(zip(saved, kept)) if m != _meta(t)]
    if not bad:
        return
    rows = "".join(f"tensor at position {i}:\nsaved metadata: {saved[i]}\n"
                   f"recomputed metadata: {_meta(kept[i])}\n" for i in bad)
    raise CheckpointError("torch.utils.checkpoint: Recomputed values for the following tensors "
                          f"have different metadata than during the forward pass.\n{rows}")


def _checkpoint_without_reentrant(function: Callable[..., Any], preserve_rng_state: bool,
                                  args: tuple, kwargs: dict, context_fn: Callable[[], Any],
                                  check: bool) -> Any:
    rng_state = get_rng_state() if preserve_rng_state else None
    early_stop = _EARLY_STOP[0]  # read at forward time, as PyTorch does
    saved: list = []  # metadata of each tensor packed in forward
    passes: dict[int, list] = {}  # graph task id -> recomputed tensors (None once handed out)
    fwd_ctx, recompute_ctx = context_fn()

    def pack(t: Any) -> int:
        saved.append(_meta(t))
        return len(saved) - 1

    def recompute() -> list:
        kept: list = []

        def keep(t: Any) -> int:
            kept.append(t)
            if early_stop and len(kept) == len(saved):
                raise _StopRecomputation
            return len(kept) - 1

        current = get_rng_state() if rng_state is not None else None
        if rng_state is not None:
            set_rng_state(rng_state)
        try:
            with enable_grad(), recompute_ctx, saved_tensors_hooks(keep, kept.__getitem__):
                function(*args, **kwargs)
        except _StopRecomputation:
            pass
        finally:
            if current is not None:
                set_rng_state(current)
        if check:
            _check_recomputed(saved, kept)
        return kept

    def unpack(index: int) -> Any:
        gid = current_graph_task_id()
        kept = passes.get(gid) if gid != -1 else None  # outside backward: recompute each time
        if kept is None:
            kept = passes[gid] = recompute()
        value = kept[index]
        if value is None:
            raise CheckpointError(_UNPACKED_TWICE)
        kept[index] = None
        return value

    with saved_tensors_hooks(pack, unpack), fwd_ctx:
        return function(*args, **kwargs)


class CheckpointFunction(Function):
    """The reentrant variant. Mirrors: ``torch.utils.checkpoint.CheckpointFunction``."""

    @staticmethod
    def forward(ctx: Any, run_function: Callable[..., Any], preserve_rng_state: bool,
                *args: Any) -> Any:
        if not any(a.requires_grad for a in args if isinstance(a, Tensor)):
            warnings.warn("None of the inputs have requires_grad=True. Gradients will be None",
                          UserWarning, stacklevel=2)
        ctx.run_function = run_function
        ctx.preserve_rng_state = preserve_rng_state
        if preserve_rng_state:
            ctx.fwd_cpu_state = get_rng_state()
        ctx.inputs = [None if isinstance(a, Tensor) else a for a in args]
        ctx.tensor_indices = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
        ctx.save_for_backward(*(a for a in args if isinstance(a, Tensor)))
        with no_grad():
            return run_function(*args)

    @staticmethod
    def backward(ctx: Any, *grads: Any) -> Any:
        task = current_graph_task()
        if task is not None and task.exec_info is not None:
            raise RuntimeError(_REENTRANT_GRAD)
        inputs = list(ctx.inputs)
        for i, t in zip(ctx.tensor_indices, ctx.saved_tensors, strict=True):
            inputs[i] = t
        current = get_rng_state() if ctx.preserve_rng_state else None
        try:
            if current is not None:
                set_rng_state(ctx.fwd_cpu_state)
            detached = [a.detach().requires_grad_(a.requires_grad) if isinstance(a, Tensor)
                        else a for a in inputs]
            with enable_grad():
                outputs = ctx.run_function(*detached)
        finally:
            if current is not None:
                set_rng_state(current)
        outputs = (outputs,) if isinstance(outputs, Tensor) else outputs
        pairs = [(o, g) for o, g in zip(outputs, grads, strict=False)
                 if isinstance(o, Tensor) and o.requires_grad]
        if not pairs:
            raise RuntimeError("none of output has requires_grad=True, this checkpoint() is not "
                               "necessary")
        _backward([o for o, _ in pairs], [g for _, g in pairs])
        return (None, None, *(a.grad if isinstance(a, Tensor) else None for a in detached))


def checkpoint_sequential(functions: Any, segments: int, input: Any,  # noqa: A002
                          use_reentrant: bool | None = None, **kwargs: Any) -> Any:
    """Checkpoint all but the last of `segments` chunks of a Sequential (or list of modules).

    Mirrors: ``torch.utils.checkpoint.checkpoint_sequential`` (same chunking: ``len // segments``
    layers per checkpointed chunk, the rest run normally).
    """
    if use_reentrant is None:
        warnings.warn(_SEQUENTIAL_WARNING, UserWarning, stacklevel=2)
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs:
        raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))
    layers = list(functions.children()) if hasattr(functions, "children") else list(functions)

    def run(chunk: list) -> Callable[[Any], Any]:
        def forward(x: Any) -> Any:
            for layer in chunk:
                x = layer(x)
            return x
        return forward

    size = len(layers) // segments
    end = 0
    for start in range(0, size * (segments - 1), size):
        end = start + size
        input = checkpoint(run(layers[start:end]), input, use_reentrant=use_reentrant,
                           preserve_rng_state=preserve)
    return run(layers[end:])(input)


def noop_context_fn() -> tuple[Any, Any]:
    """The default `context_fn`: two null contexts.

    Mirrors: ``torch.utils.checkpoint.noop_context_fn``.
    """
    return contextlib.nullcontext(), contextlib.nullcontext()


_DEBUG: list = [None]


@contextlib.contextmanager
def set_checkpoint_debug_enabled(enabled: bool | None) -> Iterator[None]:
    """Context manager overriding `checkpoint`'s ``debug`` flag (None defers to it).

    Mirrors: ``torch.utils.checkpoint.set_checkpoint_debug_enabled``.
    """
    prev, _DEBUG[0] = _DEBUG[0], enabled
    try:
        yield
    finally:
        _DEBUG[0] = prev


def detach_variable(inputs: tuple) -> tuple:
    """Detached copies of the tensors in `inputs`, keeping each one's ``requires_grad``.

    Mirrors: ``torch.utils.checkpoint.detach_variable``.
    """
    if not isinstance(inputs, tuple):
        raise RuntimeError("Only tuple of tensors is supported. Got Unsupported input type: "
                           f"{type(inputs).__name__}")
    out = []
    for inp in inputs:
        if isinstance(inp, Tensor):
            x = inp.detach()
            x.requires_grad = inp.requires_grad
            inp = x
        out.append(inp)
    return tuple(out)


def check_backward_validity(inputs: Iterable[Any]) -> None:
    """Warn when no tensor in `inputs` requires grad.

    Mirrors: ``torch.utils.checkpoint.check_backward_validity``.
    """
    if not any(i.requires_grad for i in inputs if isinstance(i, Tensor)):
        warnings.warn("None of the inputs have requires_grad=True. Gradients will be None",
                      stacklevel=2)


class DefaultDeviceType:
    """The device type whose RNG states checkpointing saves when no tensor names one.

    hookgrad has no accelerator, so it starts as ``"cpu"``.

    Mirrors: ``torch.utils.checkpoint.DefaultDeviceType``.
    """

    _default_device_type: str | None = None

    @staticmethod
    def set_device_type(device: str = "cuda") -> None:
        """Set the default device type."""
        DefaultDeviceType._default_device_type = device

    @staticmethod
    def get_device_type() -> str:
        """The default device type (``"cpu"`` until set)."""
        if not DefaultDeviceType._default_device_type:
            DefaultDeviceType._default_device_type = "cpu"
        return DefaultDeviceType._default_device_type


def get_device_states(*args: Any) -> tuple[list[int], list[Tensor]]:
    """Device ids and RNG states of the accelerator tensors in `args` (CPU and meta skipped).

    Mirrors: ``torch.utils.checkpoint.get_device_states``.
    """
    leaves = tree_flatten(args)[0]
    ids = [t.get_device() for t in leaves
           if isinstance(t, Tensor) and t.device.type not in {"cpu", "meta"}]
    return ids, [get_rng_state() for _ in ids]


def set_device_states(devices: list, states: list, *, device_type: str | None = None) -> None:
    """Restore the RNG states that `get_device_states` returned.

    Mirrors: ``torch.utils.checkpoint.set_device_states``.
    """
    if device_type is None:
        device_type = DefaultDeviceType.get_device_type()
    if device_type == "meta":
        return
    for _, state in zip(devices, states, strict=False):
        set_rng_state(state)


class CheckpointPolicy(enum.Enum):
    """What selective checkpointing does with an op's output.

    Mirrors: ``torch.utils.checkpoint.CheckpointPolicy``.
    """

    MUST_SAVE = 0
    PREFER_SAVE = 1
    MUST_RECOMPUTE = 2
    PREFER_RECOMPUTE = 3
    MUST_CPU_OFFLOAD = 4
    PREFER_CPU_OFFLOAD = 5


class SelectiveCheckpointContext:
    """What a selective-checkpoint policy function is told: whether this is the recomputation.

    Mirrors: ``torch.utils.checkpoint.SelectiveCheckpointContext``.
    """

    def __init__(self, *, is_recompute: bool, op_output: Any = None) -> None:
        self.is_recompute = is_recompute
        self.op_output = op_output

# PyTorch's ``__all__`` also lists these
__all__ += ["create_selective_checkpoint_contexts", "SAC_IGNORED_OPS"]
