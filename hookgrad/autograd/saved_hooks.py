"""Saved-tensor hook context managers (spec §6.2, §6.4, §6.5).

NOTE [Saved-tensor hook stack]
`saved_tensors_hooks` pushes a ``(pack, unpack)`` pair on ``STATE.saved_hooks_stack``; only the
innermost pair is used. `SavedTensor` (``_saved.py``) calls ``pack`` when a node saves a value
(with grad mode off) and remembers the pair it used, so ``unpack`` is the pack-time pair's even
if other hooks are active during backward. ``STATE.saved_hooks_disabled_msg`` is the message of
the innermost `disable_saved_tensors_hooks`; while it is set, pushing a pair raises it.
Nothing here costs anything per op unless a pair is active: `SavedTensor` checks the stack only
when a node saves something.
"""

from __future__ import annotations

import contextlib
from collections import defaultdict
from collections.abc import Callable, Iterator
from typing import Any
from weakref import WeakKeyDictionary, WeakValueDictionary

from hookgrad import _backend
from hookgrad._config import STATE, add_recorder, remove_recorder
from hookgrad._tensor import Tensor

__all__ = [
    "saved_tensors_hooks",
    "save_on_cpu",
    "disable_saved_tensors_hooks",
    "allow_mutation_on_saved_tensors",
]


class saved_tensors_hooks:  # noqa: N801 - torch's name
    """Context manager that sets a pack/unpack pair for every tensor saved for backward.

    ``pack_hook(tensor) -> Any`` runs when an op saves `tensor` (grad mode disabled inside);
    whatever it returns is stored instead of the tensor. ``unpack_hook(packed) -> Tensor`` runs
    each time the value is needed (each node execution that uses it, each ``grad_fn._saved_*``
    read) and must return a Tensor. Pairs nest; the innermost wins; the pair active at pack
    time is the one used to unpack.

    Args:
        pack_hook: ``(Tensor) -> Any``.
        unpack_hook: ``(Any) -> Tensor``.

    Raises:
        RuntimeError: On entry while `disable_saved_tensors_hooks` is active (its message).
        TypeError: On entry when a hook is not callable.

    Example:
        >>> import hookgrad as torch
        >>> a = torch.ones(2, requires_grad=True)
        >>> with torch.autograd.graph.saved_tensors_hooks(lambda t: t * 1, lambda t: t):
        ...     y = a.exp()

    Mirrors: ``torch.autograd.graph.saved_tensors_hooks``.
    """

    def __init__(self, pack_hook: Callable[[Tensor], Any],
                 unpack_hook: Callable[[Any], Tensor]) -> None:
        self.pack_hook = pack_hook
        self.unpack_hook = unpack_hook

    def __enter__(self) -> None:
        if not callable(self.pack_hook) or not callable(self.unpack_hook):
            raise TypeError(
                "_push_saved_tensors_default_hooks(): incompatible function arguments "
                "(pack_hook and unpack_hook must be callables)"
            )
        msg = STATE.saved_hooks_disabled_msg
        if msg is not None:
            raise RuntimeError(msg)
        STATE.saved_hooks_stack.append((self.pack_hook, self.unpack_hook))

    def __exit__(self, *args: object) -> None:
        STATE.saved_hooks_stack.pop()


class save_on_cpu(saved_tensors_hooks):  # noqa: N801 - torch's name
    """Saved tensors are packed as ``(device, host copy)`` and moved back when unpacked.

    On the NumPy (``cpu``) backend the host copy is the tensor itself, so this is observably a
    pair of pass-through hooks (the gradients are unchanged); with a GPU array backend the same
    hooks become a device-to-host offload. ``pin_memory`` is accepted and ignored.

    Args:
        pin_memory: Accepted for compatibility; no effect.
        device_type: Accepted for compatibility; no effect.

    Mirrors: ``torch.autograd.graph.save_on_cpu``.
    """

    def __init__(self, pin_memory: bool = False, device_type: str = "cuda") -> None:
        super().__init__(_pack_to_cpu, _unpack_from_cpu)


def _pack_to_cpu(tensor: Tensor) -> tuple:
    dev = tensor.device
    if dev.type == "cpu":
        return (dev, tensor)
    return (dev, Tensor._make(_backend.to_numpy(tensor._data)))  # pragma: no cover - GPU


def _unpack_from_cpu(packed: tuple) -> Tensor:
    dev, tensor = packed
    if dev.type == "cpu":
        return tensor
    xp = _backend.namespace_for(dev)  # pragma: no cover - GPU
    return Tensor._make(xp.asarray(tensor._data))  # pragma: no cover - GPU


@contextlib.contextmanager
def disable_saved_tensors_hooks(error_message: str) -> Iterator[None]:
    """Context manager under which entering `saved_tensors_hooks` raises ``error_message``.

    Entering it while a pair is active raises at once. Nested uses restore the outer message
    on exit; after the outermost exit hooks are allowed again. Ops that save tensors keep
    working.

    Args:
        error_message: Text of the ``RuntimeError``.

    Raises:
        RuntimeError: On entry if a pack/unpack pair is active.

    Mirrors: ``torch.autograd.graph.disable_saved_tensors_hooks``.
    """
    prev = STATE.saved_hooks_disabled_msg
    try:
        STATE.saved_hooks_disabled_msg = error_message
        if STATE.saved_hooks_stack:
            raise RuntimeError(error_message)
        yield
    finally:
        STATE.saved_hooks_disabled_msg = prev


# ---------------------------------------------------------------- allow_mutation_on_saved_tensors
_ALLOW_MUTATION = [False]
_OUTSIDE_MSG = (
    "Trying to backward outside of the 'allow_mutation_on_saved_tensors' context"
    "in which the graph was originally recorded."
)


class _Handle:
    __slots__ = ("__weakref__",)


class _AllowMutationOnSavedContext:
    """State of one `allow_mutation_on_saved_tensors` block (mirrors PyTorch's fields)."""

    def __init__(self) -> None:
        self.cloned: WeakKeyDictionary = WeakKeyDictionary()
        self.original: WeakKeyDictionary = WeakKeyDictionary()
        self.tid_to_weakhandle: WeakValueDictionary = WeakValueDictionary()
        self.sid_to_tid: dict = defaultdict(set)

    def clear(self) -> None:
        self.cloned.clear()
        self.original.clear()
        self.tid_to_weakhandle.clear()
        self.sid_to_tid.clear()


def _tid(t: Tensor) -> tuple:
    return (id(t), t.data_ptr(), t._version)


def _sid(t: Tensor) -> tuple:
    return (t.data_ptr(), t._version)


class _swap_with_cloned(saved_tensors_hooks):  # noqa: N801 - torch's name
    def __init__(self, ctx: _AllowMutationOnSavedContext) -> None:
        def pack_hook(tensor: Tensor) -> _Handle:
            tid = _tid(tensor)
            ctx.sid_to_tid[_sid(tensor)].add(tid)
            handle = ctx.tid_to_weakhandle.get(tid)
            if handle is None:  # the same tensor (and version) may be saved several times
                handle = _Handle()
                ctx.tid_to_weakhandle[tid] = handle
                ctx.original[handle] = tensor
            return handle

        def unpack_hook(handle: _Handle) -> Tensor:
            if not _ALLOW_MUTATION[0]:
                raise AssertionError(_OUTSIDE_MSG)
            if handle in ctx.cloned:
                return ctx.cloned[handle]
            if handle not in ctx.original:
                raise AssertionError(_OUTSIDE_MSG)
            return ctx.original[handle]

        super().__init__(pack_hook, unpack_hook)


class _CloneBeforeMutate:
    """A recorder that clones saved values just before an in-place op overwrites them.

    hookgrad's counterpart of PyTorch's ``_CloneArgBeforeMutateMode``: `bind_inplace` calls
    ``record_inplace`` on every recorder before it writes into the target.
    """

    sees_backward = False  # only watches in-place writes of user code

    def __init__(self, ctx: _AllowMutationOnSavedContext) -> None:
        self.ctx = ctx

    def record(self, prim: Any, inputs: tuple, params: dict, outputs: tuple,
               cast: Any = None) -> None:
        return None

    def record_inplace(self, prim: Any, inputs: tuple, params: dict, out: Tensor,
                       target: Tensor, cast: Any = None) -> None:
        ctx = self.ctx
        for tid in ctx.sid_to_tid.get(_sid(target), ()):
            handle = ctx.tid_to_weakhandle.get(tid)
            if handle is None or handle in ctx.cloned:
                continue  # freed by an earlier backward, or already cloned
            original = ctx.original.pop(handle)
            ctx.cloned[handle] = Tensor._make(original._data.copy())

    def rebase(self, target: Tensor, out: Tensor) -> None:
        return None

    def record_write(self, target: Tensor) -> None:
        return None

    def record_function(self, fn_cls: Any, inputs: tuple, outputs: tuple) -> None:
        return None


@contextlib.contextmanager
def allow_mutation_on_saved_tensors() -> Iterator[_AllowMutationOnSavedContext]:
    """Context manager under which tensors saved for backward may be modified in place.

    A saved tensor is cloned just before an in-place op modifies it, so backward uses the
    value it had when it was saved instead of raising the version-counter error. Run both the
    forward and the backward inside the block.

    Yields:
        The state of the block (for debugging); cleared on exit.

    Raises:
        RuntimeError: When nested.

    Mirrors: ``torch.autograd.graph.allow_mutation_on_saved_tensors``.
    """
    ctx = _AllowMutationOnSavedContext()
    recorder = _CloneBeforeMutate(ctx)
    with _swap_with_cloned(ctx):
        add_recorder(recorder)
        try:
            if _ALLOW_MUTATION[0]:
                raise RuntimeError("allow_mutation_on_saved_tensors contexts cannot be nested")
            _ALLOW_MUTATION[0] = True
            yield ctx
        finally:
            remove_recorder(recorder)
            ctx.clear()
            _ALLOW_MUTATION[0] = False
