"""``copy.deepcopy`` and pickling of tensors (installed into ``STATE_HOOKS``).

Layer 4. NOTE [Tensor copy protocols]
- ``deepcopy`` (PyTorch's ``Tensor.__deepcopy__``): leaves only; each copy lies in a copy of
  the original's whole storage at the same offset and strides (`hookgrad._storage_layout`), and
  tensors that share a storage in the original share the copied one (the memo maps each
  storage to its copy, as PyTorch's does); ``requires_grad``, ``.grad`` (deep-copied) and user
  attributes carry over; hooks, views and version counters do not.
- pickling (PyTorch's ``__reduce_ex__``): a tensor pickles as its whole storage (an array
  pickled by NumPy) plus offset, sizes and strides, as PyTorch's does, so a view loads with its
  storage offset and strides. A tensor and its ``detach()`` (the same array object) still share
  memory after loading, and so do a tensor and its views pickled together (PyTorch pickles each
  tensor's storage separately: they load unshared there); ``copy.copy`` shares memory with the
  original. A non-leaf loads as a leaf with ``requires_grad=True``; ``.grad`` is not pickled.
User attributes are the instance ``__dict__`` entries that are not hookgrad's own lazily-set
fields (those always shadow a class-level default on `Tensor`; NOTE [Tensor fields]).
"""

from __future__ import annotations

import copy
from typing import Any

from hookgrad import _backend
from hookgrad._storage_layout import storage_layout, tensor_on_storage
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


def _copy_storage(t: Tensor, memo: dict) -> Tensor:
    """A copy of `t` in a copy of its whole storage, shared through `memo` (NOTE above)."""
    layout = storage_layout(t)
    key = ("hookgrad-storage", id(layout.store))
    new_flat = memo.get(key)
    if new_flat is None:
        new_flat = memo[key] = layout.flat.copy()
        # the memo only keys by id; keep the original alive as copy.deepcopy's memo does
        memo.setdefault(id(memo), []).append(layout.store)
    return tensor_on_storage(new_flat, layout.offset, t._data.shape, layout.stride,
                             t._requires_grad, type(t))


def deepcopy_tensor(t: Tensor, memo: dict) -> Tensor:
    """``copy.deepcopy(t)``.

    Mirrors: ``torch.Tensor.__deepcopy__``.
    """
    if t.grad_fn is not None:
        raise RuntimeError(_DEEPCOPY_NONLEAF)
    if id(t) in memo:
        return memo[id(t)]
    new = _copy_storage(t, memo)
    if t._grad is not None:
        new._grad = deepcopy_tensor(t._grad, memo)
    state = _user_state(t)
    if state:
        new.__dict__.update(copy.deepcopy(state, memo))
    memo[id(t)] = new
    return new


def _rebuild_tensor(data: Any, requires_grad: bool, cls: type | None = None,
                    state: dict | None = None) -> Tensor:
    """Unpickle a tensor pickled as its own array (before storages were pickled)."""
    t = (Tensor if cls is None else cls)._make(data, requires_grad)
    if state:
        t.__dict__.update(state)
    return t


def _rebuild_on_storage(store: Any, offset: int, size: tuple, stride: tuple,
                        requires_grad: bool, cls: type | None = None,
                        state: dict | None = None) -> Tensor:
    """Unpickle a tensor lying in the (unpickled) storage array `store`."""
    t = tensor_on_storage(store.reshape(-1, order="A"), offset, size, stride, requires_grad,
                          cls, store=store)
    if state:
        t.__dict__.update(state)
    return t


def reduce_tensor(t: Tensor) -> Any:
    """``t.__reduce_ex__``: see NOTE [Tensor copy protocols].

    Mirrors: ``torch.Tensor.__reduce_ex__``.
    """
    layout = storage_layout(t)
    store = _backend.to_numpy(layout.store)  # GPU arrays are pickled from a host copy
    cls = None if type(t) is Tensor else type(t)
    return (_rebuild_on_storage, (store, layout.offset, tuple(t._data.shape), layout.stride,
                                  t._requires_grad, cls, _user_state(t) or None))


def install() -> None:
    """Plug the copy protocols into `Tensor` (late-bound hooks of layer 2)."""
    STATE_HOOKS.deepcopy_tensor = deepcopy_tensor  # type: ignore[method-assign]
    STATE_HOOKS.reduce_tensor = reduce_tensor  # type: ignore[method-assign]


install()
