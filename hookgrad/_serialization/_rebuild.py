"""hookgrad versions of the functions a PyTorch pickle calls to rebuild tensors.

A ``torch.save`` pickle names ``torch._utils._rebuild_tensor_v2`` and friends; both unpicklers
resolve those names to the functions here, which build hookgrad tensors on the storages that
the archive reader loaded (`hookgrad._storage.TypedStorage` around a flat array). Every layout
is checked against its storage before any view is made (`hookgrad._storage_layout`), so a
pickle cannot reach memory outside what the file held. Kinds of tensor hookgrad does not have
(sparse, quantized, nested, meta, wrapper subclasses) raise ``pickle.UnpicklingError``.
"""

from __future__ import annotations

import pickle
from collections import OrderedDict
from typing import Any

import numpy as np

from hookgrad import _dtypes
from hookgrad._storage import TypedStorage, _StorageBase
from hookgrad._storage_layout import tensor_on_storage
from hookgrad._tensor import Tensor
from hookgrad.nn.parameter import Parameter

__all__ = ["REBUILDERS", "rebuild_tensor", "rebuild_tensor_v2", "rebuild_parameter"]


def _flat_of(storage: Any, dt: Any = None) -> Any:
    if not isinstance(storage, _StorageBase):
        raise RuntimeError(f"expected a storage to rebuild a tensor on, got {type(storage)}")
    flat = storage._array
    if dt is not None and flat.dtype != dt.np:
        if flat.nbytes % dt.itemsize:
            raise RuntimeError(f"a storage of {flat.nbytes} bytes does not hold {dt!r} elements")
        flat = flat.view(dt.np)
    return flat


def rebuild_tensor(storage: Any, storage_offset: int, size: Any, stride: Any) -> Tensor:
    """A tensor lying in `storage`. Mirrors: ``torch._utils._rebuild_tensor``."""
    flat = _flat_of(storage)
    return tensor_on_storage(flat, storage_offset, tuple(size), tuple(stride), store=flat)


def _set_requires_grad(t: Tensor, requires_grad: Any) -> Tensor:
    if requires_grad:
        if not t.dtype.is_floating_point:
            raise RuntimeError("only Tensors of floating point dtype can require gradients")
        t.requires_grad_(True)
    return t


def rebuild_tensor_v2(storage: Any, storage_offset: int, size: Any, stride: Any,
                      requires_grad: Any, backward_hooks: Any, metadata: Any = None) -> Tensor:
    """Mirrors: ``torch._utils._rebuild_tensor_v2`` (hooks and conj/neg metadata ignored)."""
    return _set_requires_grad(rebuild_tensor(storage, storage_offset, size, stride),
                              requires_grad)


def rebuild_tensor_v3(storage: Any, storage_offset: int, size: Any, stride: Any,
                      requires_grad: Any, backward_hooks: Any, dtype: Any,
                      metadata: Any = None) -> Tensor:
    """Mirrors: ``torch._utils._rebuild_tensor_v3`` (the storage read as `dtype`)."""
    if not isinstance(dtype, _dtypes.dtype):
        raise RuntimeError(f"hookgrad has no {dtype!r} dtype")
    flat = _flat_of(storage, dtype)
    t = tensor_on_storage(flat, storage_offset, tuple(size), tuple(stride), store=flat)
    return _set_requires_grad(t, requires_grad)


def rebuild_parameter(data: Any, requires_grad: Any, backward_hooks: Any) -> Parameter:
    """Mirrors: ``torch._utils._rebuild_parameter``."""
    if not isinstance(data, Tensor):
        raise RuntimeError(f"a Parameter needs a tensor, got {type(data)}")
    return Parameter(data, bool(requires_grad))


def _set_state(obj: Any, state: Any) -> Any:
    if isinstance(state, tuple):
        if len(state) != 2:
            raise RuntimeError(f"Invalid serialized state: {state}")
        dict_state, slots_state = state
    else:
        dict_state, slots_state = state, None
    for name, value in (dict_state or {}).items():
        setattr(obj, name, value)
    for name, value in (slots_state or {}).items():
        setattr(obj, name, value)
    return obj


def rebuild_parameter_with_state(data: Any, requires_grad: Any, backward_hooks: Any,
                                 state: Any) -> Parameter:
    """Mirrors: ``torch._utils._rebuild_parameter_with_state``."""
    return _set_state(rebuild_parameter(data, requires_grad, backward_hooks), state)


def rebuild_from_type_v2(func: Any, new_type: Any, args: Any, state: Any) -> Any:
    """A tensor subclass: ``func(*args)``, retyped and given its attributes.

    Mirrors: ``torch._tensor._rebuild_from_type_v2``.
    """
    ret = func(*args)
    if isinstance(new_type, type) and type(ret) is not new_type:
        if not (issubclass(new_type, Tensor) and isinstance(ret, Tensor)):
            raise RuntimeError(f"cannot rebuild a {new_type} from a {type(ret)}")
        ret = new_type._make(ret._data, ret.requires_grad)
    return _set_state(ret, state)


def rebuild_from_numpy(data: Any, dtype: Any, device: Any, requires_grad: Any) -> Tensor:
    """Mirrors: ``torch._utils._rebuild_device_tensor_from_numpy`` (on the CPU)."""
    if not isinstance(data, np.ndarray) or not isinstance(dtype, _dtypes.dtype):
        raise RuntimeError("expected a NumPy array and a hookgrad dtype")
    t = Tensor._make(np.array(data, dtype=dtype.np))
    return _set_requires_grad(t, requires_grad)


def rebuild_from_cpu_tensor(data: Any, dtype: Any, device: Any, requires_grad: Any) -> Tensor:
    """Mirrors: ``torch._utils._rebuild_device_tensor_from_cpu_tensor`` (on the CPU)."""
    if not isinstance(data, Tensor):
        raise RuntimeError(f"expected a tensor, got {type(data)}")
    return _set_requires_grad(data.detach().to(dtype), requires_grad)


def _unsupported(kind: str) -> Any:
    def refuse(*args: Any) -> Any:
        raise pickle.UnpicklingError(f"hookgrad has no {kind} tensors, so it cannot load one")

    refuse.__name__ = refuse.__qualname__ = f"_rebuild_{kind}_tensor"
    return refuse


# ``torch._utils.<name>`` -> the hookgrad function (both unpicklers resolve these)
REBUILDERS: dict[str, Any] = {
    "_rebuild_tensor": rebuild_tensor,
    "_rebuild_tensor_v2": rebuild_tensor_v2,
    "_rebuild_tensor_v3": rebuild_tensor_v3,
    "_rebuild_parameter": rebuild_parameter,
    "_rebuild_parameter_with_state": rebuild_parameter_with_state,
    "_rebuild_device_tensor_from_numpy": rebuild_from_numpy,
    "_rebuild_xla_tensor": rebuild_from_numpy,
    "_rebuild_device_tensor_from_cpu_tensor": rebuild_from_cpu_tensor,
    "_rebuild_qtensor": _unsupported("quantized"),
    "_rebuild_sparse_tensor": _unsupported("sparse"),
    "_rebuild_meta_tensor_no_storage": _unsupported("meta"),
    "_rebuild_nested_tensor": _unsupported("nested"),
    "_rebuild_wrapper_subclass": _unsupported("wrapper_subclass"),
}


def new_storage(flat: Any) -> TypedStorage:
    """The storage object a loaded flat array is handed to rebuild functions as."""
    return TypedStorage(flat)


def empty_hooks() -> OrderedDict:
    """The ``backward_hooks`` argument PyTorch writes (always empty: hooks are not saved)."""
    return OrderedDict()
