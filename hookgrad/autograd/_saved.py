"""`SavedTensor`: a value a node keeps for backward, with pack/unpack hooks and version checks.

NOTE [Saved outputs]
A node that saves its own output (``exp`` saves ``result``) must not hold that output tensor:
output -> grad_fn -> saved -> output would be a reference cycle on every such op. Like PyTorch,
an output is saved as its array, version counter and output number, and unpacking builds a fresh
tensor whose ``grad_fn`` is the node itself, so double backward flows through it. Saved *inputs*
are held as the tensor object (unpacked as the same object when no hooks are involved).
"""

from __future__ import annotations

import re
from typing import Any

from hookgrad._config import STATE, set_grad_mode
from hookgrad._tensor import Tensor, VersionCounter

FREED_ERROR = (
    "Trying to backward through the graph a second time (or directly access saved tensors after "
    "they have already been freed). Saved intermediate values of the graph are freed when you "
    "call .backward() or autograd.grad(). Specify retain_graph=True if you need to backward "
    "through the graph a second time or if you need to access saved tensors after calling "
    "backward."
)
_PACK_INPLACE_ERROR = (
    "A saved tensor pack hook is modifying its input in place. Tensors provided as input to pack "
    "hook cannot be modified by in-place operations as this can lead to unexpected side-effects. "
    "Please open an issue if you need to perform in-place operations on the input to a pack hook."
)
_DETACHED_ERROR = (
    "Trying to use a saved tensor that has been detached in-place, i.e. with .detach_().This is "
    "not supported, please use out-of-place `.detach()` instead"
)
_REGISTER_FREED_ERROR = (
    "Calling register_hooks on a saved tensor after it has been freed. Saved intermediate values "
    "of the graph are freed when you call .backward() or autograd.grad(). Specify "
    "retain_graph=True if you need to backward through the graph a second time or if you need "
    "to access saved variables after calling backward."
)
_HOOKS_SET_ERROR = (
    "Calling register_hooks on a saved tensor whose hooks have already been set. Hint: only one "
    "pair of hooks is allowed at a time."
)


class SavedTensor:
    """One saved value of a node.

    Mirrors: ``torch._C._autograd.SavedTensor`` (``grad_fn._raw_saved_<name>``).
    """

    # Hot fields are slots; fields most saved values never set are class-level defaults that an
    # instance overrides in its ``__dict__`` (the pattern of NOTE [Tensor fields]): saving is on
    # the forward path of every recorded op.
    __slots__ = (
        "_tensor", "_data", "_vc", "_version", "_output_nr", "_requires_grad", "_is_output",
        "_freed", "_wrapped", "_nonleaf", "__dict__", "__weakref__",
    )
    _fw_grads = None  # forward-AD tangents of a saved output (forward-over-reverse)
    _unpack = None  # the unpack hook, when pack hooks were applied
    _packed = None

    def __init__(self, t: Tensor, is_output: bool, node: Any = None) -> None:
        self._freed = False  # a slot: every saved value is freed after a non-retained pass
        self._is_output = is_output
        self._output_nr = t._output_nr
        self._requires_grad = t._requires_grad
        self._nonleaf = t._grad_fn is not None  # PyTorch's SavedVariable ``is_leaf_``
        vc = t._version_counter
        if is_output and t.__class__ is not Tensor and getattr(t, "_saved_whole", False):
            is_output = self._is_output = False  # a vmap BatchedTensor: kept as itself
        if is_output:
            if vc is None:  # shared with the output tensor from now on
                vc = t._version_counter = VersionCounter()
            self._tensor = None
            self._data = t._data
        else:
            # An input without a counter has version 0 and stays None here: this object holds
            # the tensor, and whatever creates its counter later (a view, an in-place op, a
            # detached alias) creates it on that tensor, where `_counter` finds it.
            self._tensor = t
            self._data = None
        self._vc = vc
        self._version = 0 if vc is None else vc.value
        # A wrapped Python number (``x * 2.0``: every scalar operand) or an absent input: never
        # packed, like PyTorch's numbers and Nones, and no version check. A slot, not a class
        # default: setting the default's override would create an instance dict per scalar op.
        self._wrapped = wrapped = t._wrapped_number or t._absent
        if not wrapped and STATE.saved_hooks_stack:
            pack, unpack = STATE.saved_hooks_stack[-1]
            self._apply_pack(pack, unpack, t)

    def _counter(self) -> VersionCounter:
        """The version counter of the saved value (created on the input tensor if needed)."""
        vc = self._vc
        if vc is None:
            vc = self._vc = self._tensor._vc()  # type: ignore[union-attr]
        return vc

    def _apply_pack(self, pack: Any, unpack: Any, t: Tensor) -> None:
        self._counter()  # now: `_tensor` may be replaced by a stand-in below
        before = t._version
        prev = STATE.grad_enabled
        set_grad_mode(False)  # pack hooks run with grad mode off (spec §1.6)
        try:
            packed = pack(t)
        finally:
            set_grad_mode(prev)
        if t._version != before:
            raise RuntimeError(_PACK_INPLACE_ERROR)
        self._packed = packed
        self._unpack = unpack
        if not self._is_output:
            # The hooks own the value now; keep only the leaf identity for gradient edges.
            self._tensor = t if t._grad_fn is None and t._requires_grad else _edge_only(t)
        self._data = None

    def register_hooks(self, pack: Any, unpack: Any) -> None:
        """Mirrors: ``SavedTensor.register_hooks`` (pack now, unpack on every access)."""
        if not callable(pack) or not callable(unpack):
            raise TypeError("register_hooks expects two callables")
        if self._freed:
            raise RuntimeError(_REGISTER_FREED_ERROR)
        if self._unpack is not None:
            raise RuntimeError(_HOOKS_SET_ERROR)
        self._apply_pack(pack, unpack, self._current())

    def _current(self) -> Tensor:
        if self._is_output:
            return Tensor._make(self._data)
        return self._tensor

    def unpack(self, node: Any = None) -> Tensor:
        """The saved value; raises if freed or if it was modified in place since saving."""
        if self._freed:
            raise RuntimeError(FREED_ERROR)
        if self._unpack is not None:
            return self._unpack_with_hook(node)
        if not self._is_output:
            t = self._tensor
            vc = self._vc
            if vc is None:
                vc = t._version_counter
            if vc is not None and vc.value != self._version and not self._wrapped:
                raise RuntimeError(self._version_message(node))
            if self._nonleaf and t._grad_fn is None:
                # the input lost its graph since (``detach_()``): PyTorch reads the node from
                # the tensor itself and refuses (with hooks it keeps the node saved at pack)
                raise RuntimeError(_DETACHED_ERROR)
            return t
        if self._vc.value != self._version and not self._wrapped:
            raise RuntimeError(self._version_message(node))
        out = Tensor._make(self._data, self._requires_grad)
        out._version_counter = self._vc
        if self._requires_grad and node is not None:
            out._grad_fn = node
            if self._output_nr:  # 0 is the class default: no instance __dict__ for it
                out._output_nr = self._output_nr
        if self._fw_grads:
            out._fw_grads = self._fw_grads
        return out

    def unpack_data(self, node: Any = None) -> Any:
        """The saved value's array, for rules that run on arrays (NOTE [Rule operations]).

        `unpack` without the tensor it would build for a saved output (a saved input unpacks
        as itself, so it simply goes through `unpack`, as do freed and hooked values).
        """
        if self._unpack is not None or self._freed or not self._is_output:
            return self.unpack(node)._data
        if self._vc.value != self._version and not self._wrapped:
            raise RuntimeError(self._version_message(node))
        return self._data

    def _unpack_with_hook(self, node: Any) -> Tensor:
        data = self._unpack(self._packed)
        if not isinstance(data, Tensor):
            raise TypeError(
                "Output of saved tensor unpack_hook expected to be a Tensor but got result of "
                f"type {type(data).__name__}"
            )
        out = Tensor._make(data._data, self._requires_grad)
        out._version_counter = data._vc()
        if not self._requires_grad:
            return out
        if self._is_output:
            if node is not None:
                out._grad_fn, out._output_nr = node, self._output_nr
        else:
            src = self._tensor
            out._grad_fn, out._output_nr = src._grad_fn, src._output_nr
            if src._grad_fn is None:
                out._leaf_alias_of = src  # type: ignore[attr-defined]
        return out

    def _version_message(self, node: Any) -> str:
        t = self._current()
        shape = list(t._data.shape)
        where = ""
        fn = t._grad_fn if not self._is_output else node
        if fn is not None:
            name = re.sub(r"Backward\d*$", "", fn.name())
            where = f", which is output {self._output_nr} of {name},"
        return (
            "one of the variables needed for gradient computation has been modified by an "
            f"inplace operation: [{t.type()} {shape}]{where} is at version "
            f"{self._counter().value}; "
            f"expected version {self._version} instead. Hint: enable anomaly detection to find "
            "the operation that failed to compute its gradient, with "
            "torch.autograd.set_detect_anomaly(True, check_nan=False)."
        )

    def release(self) -> None:
        self._freed = True
        self._tensor = None
        self._data = None
        if self._packed is not None:
            self._packed = None


def _edge_only(t: Tensor) -> Tensor:
    """A data-less stand-in that carries `t`'s gradient edge (packed values own the data)."""
    out = Tensor._make(t._data[()] if t._data.ndim == 0 else t._data[:0], t._requires_grad)
    out._grad_fn, out._output_nr = t._grad_fn, t._output_nr
    return out


__all__ = ["SavedTensor", "FREED_ERROR"]
