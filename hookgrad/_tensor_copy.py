"""``copy.deepcopy`` and pickling of tensors (installed into ``STATE_HOOKS``).

Layer 4. NOTE [Tensor copy protocols]
- ``deepcopy`` (PyTorch's ``Tensor.__deepcopy__``): leaves only; tensors that share memory in
  the original share memory in the copy (the memo maps each memory owner to its copy, as
  PyTorch's memo maps each storage); ``requires_grad``, ``.grad`` (deep-copied) and user
  attributes carry over; hooks, views and version counters do not.
- pickling (PyTorch's ``__reduce_ex__``): the array is pickled by NumPy, so a tensor and its
  ``detach()`` (the same array object) still share memory after loading, strides of C- and
  F-contiguous layouts survive, and ``copy.copy`` shares memory with the original. A non-leaf
  loads as a leaf with ``requires_grad=True``; ``.grad`` is not pickled. One difference: PyTorch
  pickles a view's whole storage, hookgrad only the view's elements.
User attributes are the instance ``__dict__`` entries that are not hookgrad's own lazily-set
fields (those always shadow a class-level default on `Tensor`; NOTE [Tensor fields]).
"""

from __future__ import annotations

import copy
from typing import Any

import numpy as np

from hookgrad import _backend
from hookgrad._tensor import STATE_HOOKS, Tensor

_DEEPCOPY_NONLEAF = (
    "Only Tensors created explicitly by the user (graph leaves) support the deepcopy protocol at "
    "the moment.  If you were attempting to deepcopy a module, this may be because of a "
    "torch.nn.utils.weight_norm usage, see https://github.com/pytorch/pytorch/pull/103001"
)


def _user_state(t: Tensor) -> dict:
    """The instance attributes a user set (``t.foo = 1``), never hookgrad's own fields."""
    state = getattr(t, "__dict__", None)
    if not state:
        return {}
    return {k: v for k, v in state.items() if not hasattr(Tensor, k)}


def _copy_memory(arr: Any, memo: dict) -> Any:
    """`arr`'s elements in a copy of its memory owner, shared through `memo` (NOTE above)."""
    owner = _backend.memory_owner(arr)
    if not (owner.flags.c_contiguous or owner.flags.f_contiguous):
        return arr.copy()
    key = ("hookgrad-memory", id(owner))
    new_owner = memo.get(key)
    if new_owner is None:
        new_owner = memo[key] = owner.copy(order="K")
        # the memo only keys by id; keep the original alive as copy.deepcopy's memo does
        memo.setdefault(id(memo), []).append(owner)
    offset = _backend.element_offset(arr, owner)
    item = arr.itemsize
    strides = tuple(s // item for s in arr.strides)
    flat = new_owner.reshape(-1, order="A")
    if arr.size == 0:
        return np.empty(arr.shape, dtype=arr.dtype)
    return np.lib.stride_tricks.as_strided(
        flat[offset:], shape=arr.shape, strides=tuple(s * item for s in strides))


def deepcopy_tensor(t: Tensor, memo: dict) -> Tensor:
    """``copy.deepcopy(t)``.

    Mirrors: ``torch.Tensor.__deepcopy__``.
    """
    if t.grad_fn is not None:
        raise RuntimeError(_DEEPCOPY_NONLEAF)
    if id(t) in memo:
        return memo[id(t)]
    xp = _backend.namespace_of(t._data)
    data = _copy_memory(t._data, memo) if xp is np else t._data.copy()
    new = type(t)._make(data, t._requires_grad)
    if t._grad is not None:
        new._grad = deepcopy_tensor(t._grad, memo)
    state = _user_state(t)
    if state:
        new.__dict__.update(copy.deepcopy(state, memo))
    memo[id(t)] = new
    return new


def _rebuild_tensor(data: Any, requires_grad: bool, cls: type | None = None,
                    state: dict | None = None) -> Tensor:
    """Unpickle a tensor (module-level so pickle can find it)."""
    t = (Tensor if cls is None else cls)._make(data, requires_grad)
    if state:
        t.__dict__.update(state)
    return t


def reduce_tensor(t: Tensor) -> Any:
    """``t.__reduce_ex__``: see NOTE [Tensor copy protocols].

    Mirrors: ``torch.Tensor.__reduce_ex__``.
    """
    data = _backend.to_numpy(t._data)
    cls = None if type(t) is Tensor else type(t)
    return (_rebuild_tensor, (data, t._requires_grad, cls, _user_state(t) or None))


def install() -> None:
    """Plug the copy protocols into `Tensor` (late-bound hooks of layer 2)."""
    STATE_HOOKS.deepcopy_tensor = deepcopy_tensor  # type: ignore[method-assign]
    STATE_HOOKS.reduce_tensor = reduce_tensor  # type: ignore[method-assign]


install()
