"""Helpers that PyTorch's data-parallel wrappers share (DDP, FSDP) and libraries reuse:
packing keyword arguments, applying a function to every tensor of a nested structure, moving
or casting inputs, and syncing a module's state from one rank.

Mirrors: ``torch.distributed.utils``.
"""

from __future__ import annotations

import dataclasses
import traceback
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

__all__: list[str] = []


def _is_tensor(x: Any) -> bool:
    from hookgrad._tensor import Tensor

    return isinstance(x, Tensor)


def _pack_kwargs(*args: Any, **kwargs: Any) -> tuple[tuple[Any, ...], tuple[str, ...]]:
    """``(args + kwarg values, kwarg keys)``: positional form of a call.

    Example:
        >>> _pack_kwargs(1, 2, a=3, b=4)
        ((1, 2, 3, 4), ('a', 'b'))

    Mirrors: ``torch.distributed.utils._pack_kwargs``.
    """
    return (*args, *kwargs.values()), tuple(kwargs.keys())


def _unpack_kwargs(flat_args: tuple[Any, ...],
                   kwarg_keys: tuple[str, ...]) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """Inverse of `_pack_kwargs`. Mirrors: ``torch.distributed.utils._unpack_kwargs``."""
    if len(kwarg_keys) > len(flat_args):
        raise AssertionError(f"too many keys {len(kwarg_keys)} vs. {len(flat_args)}")
    if not kwarg_keys:
        return flat_args, {}
    args = flat_args[:-len(kwarg_keys)]
    return args, dict(zip(kwarg_keys, flat_args[-len(kwarg_keys):], strict=True))


def _apply_to_tensors(fn: Callable[[Any], Any], container: Any) -> Any:
    """``fn`` applied to every tensor inside lists, tuples, dicts, sets, dataclasses and
    named tuples (rebuilt with the results; other values kept).

    Mirrors: ``torch.distributed.utils._apply_to_tensors``.
    """
    def apply(x: Any) -> Any:
        if _is_tensor(x):
            return fn(x)
        if hasattr(x, "__dataclass_fields__"):
            dc = dataclasses.replace(x)
            for f in dataclasses.fields(dc):
                setattr(dc, f.name, apply(getattr(dc, f.name)))
            return dc
        if isinstance(x, OrderedDict):
            return OrderedDict((k, apply(v)) for k, v in x.items())
        if isinstance(x, dict):
            return {k: apply(v) for k, v in x.items()}
        if isinstance(x, tuple) and hasattr(x, "_fields"):
            return type(x)(*(apply(v) for v in x))
        if isinstance(x, (list, tuple, set)):
            return type(x)(apply(v) for v in x)
        return x

    return apply(container)


def _recursive_to(inputs: Any, target_device: Any, use_side_stream_for_tensor_copies: bool
                  ) -> list[Any]:
    """Every tensor of ``inputs`` moved to ``target_device``, wrapped in a one-item list (the
    form DDP's ``_to_kwargs`` consumes).

    Mirrors: ``torch.distributed.utils._recursive_to``.
    """
    def to(t: Any) -> Any:
        return t if str(t.device) == str(target_device) else t.to(target_device)

    return [_apply_to_tensors(to, inputs)]


def _to_kwargs(inputs: tuple[Any, ...], kwargs: dict[str, Any] | None, target_device: Any,
               use_side_stream_for_tensor_copies: bool
               ) -> tuple[tuple[Any, ...], tuple[dict[str, Any], ...]]:
    """Inputs and keyword inputs moved to ``target_device``, as DDP's forward prepares them.

    Mirrors: ``torch.distributed.utils._to_kwargs``.
    """
    moved = _recursive_to(inputs, target_device, use_side_stream_for_tensor_copies) \
        if inputs else []
    moved_kw = _recursive_to(kwargs, target_device, use_side_stream_for_tensor_copies) \
        if kwargs else []
    while len(moved) < len(moved_kw):
        moved.append(())
    while len(moved_kw) < len(moved):
        moved_kw.append({})
    return tuple(moved), tuple(moved_kw)


def _cast_forward_inputs(dtype: Any, *args: Any, **kwargs: Any
                         ) -> tuple[Any, Any]:
    """Floating-point tensors of ``args``/``kwargs`` cast to ``dtype`` (None: unchanged).

    Mirrors: ``torch.distributed.utils._cast_forward_inputs``.
    """
    if dtype is None:
        return args, kwargs

    def cast(t: Any) -> Any:
        return t.to(dtype) if t.is_floating_point() and t.dtype != dtype else t

    return _apply_to_tensors(cast, args), _apply_to_tensors(cast, kwargs)


def _p_assert(cond: Any, s: str, raise_assertion_error: bool = True) -> None:
    """Print ``s`` and the stack, then raise AssertionError, when ``cond`` is false (an
    assert that also reports from inside autograd hooks, where exceptions may be swallowed).

    Mirrors: ``torch.distributed.utils._p_assert``.
    """
    if not cond:
        print(s)
        traceback.print_stack()
        if raise_assertion_error:
            raise AssertionError(s)


def _replace_by_prefix(state_dict: dict[str, Any], old_prefix: str, new_prefix: str) -> None:
    """Rename, in place, every key of ``state_dict`` starting with ``old_prefix``.

    Mirrors: ``torch.distributed.utils._replace_by_prefix``.
    """
    if old_prefix == new_prefix:
        raise ValueError("old_prefix and new_prefix must be distinct")
    for key in list(state_dict.keys()):
        if key.startswith(old_prefix):
            state_dict[new_prefix + key[len(old_prefix):]] = state_dict.pop(key)


def _sync_params_and_buffers(process_group: Any, module_states: list[Any],
                             broadcast_bucket_size: int, src: int) -> None:
    """Overwrite ``module_states`` (tensors) on every rank with rank ``src``'s.

    Mirrors: ``torch.distributed.utils._sync_params_and_buffers``.
    """
    from hookgrad.autograd.grad_mode import no_grad
    from hookgrad.distributed.collectives import broadcast

    with no_grad():
        for t in module_states:
            broadcast(t.detach(), src, group=process_group)


def _sync_module_states(module: Any, process_group: Any, broadcast_bucket_size: int, src: int,
                        params_and_buffers_to_ignore: Any,
                        broadcast_buffers: bool = True) -> None:
    """Broadcast ``module``'s parameters (and buffers) from rank ``src``, skipping ignored
    names.

    Mirrors: ``torch.distributed.utils._sync_module_states``.
    """
    states = [p for n, p in module.named_parameters() if n not in params_and_buffers_to_ignore]
    if broadcast_buffers:
        states += [b for n, b in module.named_buffers() if n not in params_and_buffers_to_ignore]
    if states:
        _sync_params_and_buffers(process_group, states, broadcast_bucket_size, src)


def _verify_param_shape_across_processes(process_group: Any, tensors: list[Any],
                                         logger: Any = None) -> None:
    """Raise on every rank when ranks hold different numbers or shapes of ``tensors``.

    Mirrors: ``torch.distributed.utils._verify_param_shape_across_processes``.
    """
    from hookgrad.distributed.collectives import all_gather_object

    shapes = [tuple(t.shape) for t in tensors]
    everyone: list[Any] = [None] * process_group.size()
    all_gather_object(everyone, shapes, group=process_group)
    me = process_group.rank()
    for r, theirs in enumerate(everyone):
        if len(theirs) != len(shapes):
            raise RuntimeError(
                f"DDP expects same model across all ranks, but Rank {me} has {len(shapes)} "
                f"params, while rank {r} has inconsistent {len(theirs)} params.")
        for i, (a, b) in enumerate(zip(shapes, theirs, strict=True)):
            if a != b:
                raise RuntimeError(
                    f"[{me}]: params[{i}] in this process with sizes {list(a)} appears not to "
                    f"match sizes of the same param in process {r}.")
