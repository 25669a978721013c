"""Selective activation checkpointing: a policy says which ops' outputs the forward keeps, so
that the recomputation in backward reuses them instead of running those ops again.

`create_selective_checkpoint_contexts` returns the ``context_fn`` pair of `checkpoint`: a
dispatch mode around the forward that asks the policy about each op and stores the outputs of
the ones to save (detached, with their version, so a later in-place change is caught), and a
dispatch mode around the recomputation that hands stored outputs back in the same order and
runs the other ops. Ops are identified by their ``hookgrad.ops.aten`` overloads, as PyTorch's
``torch.ops.aten`` ones.

NOTE [Dispatch above autograd]
PyTorch's dispatch modes run below autograd, so a stored output handed back still gets its
graph node. hookgrad's modes run above it (a handler's ``func(...)`` is the recorded call), so
the recomputation runs a saved op for its node and saved tensors and then gives it the stored
values: results and gradients are PyTorch's (a saved random op keeps its forward draw), but the
op's compute is not skipped.

Mirrors: ``torch.utils.checkpoint.create_selective_checkpoint_contexts`` and
``SAC_IGNORED_OPS`` (the metadata ops never cached; those hookgrad's dispatch never shows are
left out of the set). `hookgrad.utils.checkpoint` publishes both names (installed from above:
this module builds on that one).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from typing import Any

from hookgrad._functorch.pytree_util import tree_flatten, tree_map
from hookgrad._tensor import Tensor
from hookgrad.utils._python_dispatch import OpOverload, OpOverloadPacket, TorchDispatchMode, ops
from hookgrad.utils.checkpoint import CheckpointPolicy, SelectiveCheckpointContext

__all__ = ["create_selective_checkpoint_contexts", "SAC_IGNORED_OPS"]


def _resolve(names: str) -> set:
    ops = set()
    for name in names.split():
        ns, op, overload = name.split(".")
        try:
            ops.add(getattr(getattr(getattr(ops, ns), op), overload))
        except AttributeError:
            continue
    return ops


SAC_IGNORED_OPS = _resolve(
    "aten.detach.default aten.dim.default aten.size.default aten.sym_size.default "
    "aten.stride.default aten.sym_stride.default aten.storage_offset.default "
    "aten.sym_storage_offset.default aten.numel.default aten.sym_numel.default "
    "aten.is_contiguous.default aten.is_contiguous.memory_format "
    "aten.is_strides_like_format.default aten.is_non_overlapping_and_dense.default "
    "prim.device.default")

_SAC_MISMATCH = ("This can happen if the operations in the checkpointed region are "
                 "nondeterministic or depend on global state that changed between forward and "
                 "backward.")
_RECOMPUTE, _CONSUMED = object(), object()


class _VersionWrapper:
    """A cached output and its version at forward time."""

    def __init__(self, val: Any) -> None:
        self.val = val
        self.version = val._version if isinstance(val, Tensor) else None

    def get_val(self, allow_cache_entry_mutation: bool) -> Any:
        if (self.version is not None and not allow_cache_entry_mutation
                and self.val._version != self.version):
            raise RuntimeError(
                "Tensor cached during selective activation checkpoint has been mutated")
        return self.val


class _CachingTorchDispatchMode(TorchDispatchMode):
    """Forward side: run each op, ask the policy, keep the outputs to save."""

    def __init__(self, policy_fn: Callable, storage: dict) -> None:
        super().__init__()
        self.policy_fn, self.storage = policy_fn, storage
        self.func_counter: dict = defaultdict(int)

    def __torch_dispatch__(self, func: Any, types: Any, args: tuple = (),
                           kwargs: Any = None) -> Any:
        kwargs = kwargs or {}
        out = func(*args, **kwargs)
        if func in SAC_IGNORED_OPS:
            return out
        idx = self.func_counter[func]
        self.func_counter[func] += 1
        policy = self.policy_fn(SelectiveCheckpointContext(is_recompute=False, op_output=out),
                                func, *args, **kwargs)
        if isinstance(policy, bool):
            policy = CheckpointPolicy.MUST_SAVE if policy else CheckpointPolicy.PREFER_RECOMPUTE
        if policy in (CheckpointPolicy.MUST_SAVE, CheckpointPolicy.PREFER_SAVE):
            self.storage[func][idx] = tree_map(
                lambda x: _VersionWrapper(x.detach() if isinstance(x, Tensor) else x), out)
        else:
            self.storage[func][idx] = _RECOMPUTE
        return out


class _CachedTorchDispatchMode(TorchDispatchMode):
    """Recompute side: hand back the saved outputs in forward order, run the rest."""

    def __init__(self, policy_fn: Any, storage: dict,
                 allow_cache_entry_mutation: bool = False) -> None:
        super().__init__()
        self.storage, self.allow_cache_entry_mutation = storage, allow_cache_entry_mutation
        self.func_counter: dict = defaultdict(int)

    def __enter__(self) -> Any:
        self.func_counter.clear()  # a second backward reports "an extra time", not a miss
        return super().__enter__()

    def __torch_dispatch__(self, func: Any, types: Any, args: tuple = (),
                           kwargs: Any = None) -> Any:
        kwargs = kwargs or {}
        if func in SAC_IGNORED_OPS:
            return func(*args, **kwargs)
        idx = self.func_counter[func]
        self.func_counter[func] += 1
        entries = self.storage.get(func)
        if entries is None:
            raise RuntimeError(f"{func} encountered during backward but not found in storage. "
                               f"{_SAC_MISMATCH}")
        entry = entries.get(idx)
        if entry is None:
            raise RuntimeError(f"{func} invocation index {idx} encountered during backward but "
                               f"not found in storage. {_SAC_MISMATCH}")
        if entry is _CONSUMED:
            raise RuntimeError("Trying to backward an extra time. You are only allowed to "
                               "backward once on any region computed under selective "
                               "activation checkpoint.")
        if entry is _RECOMPUTE:
            return func(*args, **kwargs)
        entries[idx] = _CONSUMED
        cached = tree_map(lambda x: x.get_val(self.allow_cache_entry_mutation), entry)
        # NOTE [Dispatch above autograd]: the op runs so that its node and saved tensors are
        # recorded as in the forward; its values are then the stored ones
        result = func(*args, **kwargs)
        flat, _ = tree_flatten(result)
        for new, old in zip(flat, tree_flatten(cached)[0]):
            if isinstance(new, Tensor) and isinstance(old, Tensor):
                new._data[...] = old._data
        return result


def create_selective_checkpoint_contexts(policy_fn_or_list: Any,
                                         allow_cache_entry_mutation: bool = False) -> tuple:
    """The ``(forward, recompute)`` contexts of selective checkpointing, for ``context_fn``.

    Args:
        policy_fn_or_list: ``policy(ctx, op, *args, **kwargs) -> CheckpointPolicy`` (or bool),
            or a list of op overloads to save (every other op is recomputed).
        allow_cache_entry_mutation: skip the check that saved outputs were not changed in place.

    Raises:
        ValueError: a list entry that is not an op overload. TypeError: neither form.

    Mirrors: ``torch.utils.checkpoint.create_selective_checkpoint_contexts``.
    """
    if isinstance(policy_fn_or_list, list):
        for op in policy_fn_or_list:
            if not isinstance(op, OpOverload):
                extra = ("Please update the OpOverloadPacket to a specific OpOverload.For "
                         "example, if you have `torch.ops.aten.mm`, change it to "
                         "`torch.ops.aten.mm.default`."
                         if isinstance(op, OpOverloadPacket) else "")
                raise ValueError(f"Expected op in `op_list` to be an OpOverload but got: {op} "
                                 f"of type {type(op)}. {extra}")
        ops = list(policy_fn_or_list)

        def policy_fn(ctx: Any, op: Any, *args: Any, **kwargs: Any) -> Any:
            return CheckpointPolicy.MUST_SAVE if op in ops else CheckpointPolicy.PREFER_RECOMPUTE
    elif callable(policy_fn_or_list):
        policy_fn = policy_fn_or_list
    else:
        raise TypeError("policy_fn_or_list must be either a function or a list of ops.")
    storage: dict = defaultdict(dict)
    return (_CachingTorchDispatchMode(policy_fn, storage),
            _CachedTorchDispatchMode(None, storage, allow_cache_entry_mutation))
