"""Tensor payloads in archives: each storage is one ``.data/<key>.npy`` member, never a pickle.

A tensor pickles as ``_rebuild_tensor(storage, offset, size, stride, requires_grad, hooks)``
where ``storage`` is a persistent id ``("storage", dtype name, key, device, numel)``. The key
is given per storage (`hookgrad._storage_layout`): a view writes its base's whole storage, and
tensors sharing a storage write one member and load sharing one storage again, with PyTorch's
offsets and strides. PyTorch archives (``.storage`` members) are readable too.
"""

from __future__ import annotations

import io
import pickle
import warnings
from collections import OrderedDict
from typing import Any

import numpy as np

from hookgrad import _backend
from hookgrad._storage_layout import storage_layout, tensor_on_storage
from hookgrad._tensor import Tensor
from hookgrad._tensor_copy import _user_state
from hookgrad.nn.parameter import Parameter

_HOOK_WARNING = (
    "backward hook {hook!r} on tensor will not be serialized.  If this is expected, you can "
    "decorate the function with @hookgrad.utils.hooks.unserializable_hook to suppress this "
    "warning")

# PyTorch storage class names (legacy typed storages) -> NumPy dtypes, for reading its archives
TORCH_STORAGE_DTYPES = {
    "FloatStorage": "float32", "DoubleStorage": "float64", "HalfStorage": "float16",
    "LongStorage": "int64", "IntStorage": "int32", "ShortStorage": "int16",
    "CharStorage": "int8", "ByteStorage": "uint8", "BoolStorage": "bool",
    "ComplexFloatStorage": "complex64", "ComplexDoubleStorage": "complex128",
}


class StorageRef:
    """One memory buffer to write once: a flat array in memory order plus its archive key."""

    __slots__ = ("flat", "key", "location", "__weakref__")

    def __init__(self, flat: np.ndarray, key: int, location: str) -> None:
        self.flat = flat
        self.key = key
        self.location = location  # the device the tensor lived on ("cpu", "cuda:0")

    def persistent_id(self) -> tuple:
        return ("storage", self.flat.dtype.name, self.key, self.location, int(self.flat.size))


class StorageTable:
    """Storages of one exporter, keyed by the identity of the storage array."""

    def __init__(self) -> None:
        self._by_store: dict[int, tuple[Any, StorageRef]] = {}
        self.new: list[StorageRef] = []  # written by the exporter, then cleared

    def storage_of(self, t: Tensor) -> tuple[StorageRef, int, tuple]:
        """``(storage, element offset, element strides)`` of `t` in its storage."""
        layout = storage_layout(t)
        entry = self._by_store.get(id(layout.store))
        if entry is None:
            # GPU arrays are copied to the host for writing, once per storage
            ref = StorageRef(_backend.to_numpy(layout.flat), len(self._by_store), str(t.device))
            # keep the store alive so its id is not reused by another array during this export
            self._by_store[id(layout.store)] = entry = (layout.store, ref)
            self.new.append(ref)
        return entry[1], layout.offset, layout.stride


def npy_bytes(flat: np.ndarray) -> bytes:
    """`flat` in NumPy's ``.npy`` format (no pickled objects allowed)."""
    buf = io.BytesIO()
    np.lib.format.write_array(buf, np.ascontiguousarray(flat), allow_pickle=False)
    return buf.getvalue()


def warn_if_has_hooks(t: Tensor) -> None:
    """PyTorch's warning for backward hooks, which pickling drops.

    Mirrors: ``torch.utils.hooks.warn_if_has_hooks``.
    """
    registry = t._backward_hooks
    if not registry:
        return
    for entry in list(registry.values()):
        hook = getattr(entry, "fn", entry)
        if not hasattr(hook, "__torch_unserializable__"):
            warnings.warn(_HOOK_WARNING.format(hook=hook), UserWarning, stacklevel=6)


def reduce_tensor(t: Tensor, table: StorageTable) -> tuple:
    """Reduce tuple of a tensor (or `Parameter`) whose storage goes through `table`.

    Hooks are never saved; as in PyTorch only plain tensors warn about it (a `Parameter`'s
    reduction drops its hooks silently).
    """
    if not isinstance(t, Parameter):
        warn_if_has_hooks(t)
    ref, offset, stride = table.storage_of(t)
    args = (ref, offset, tuple(t._data.shape), stride, bool(t._requires_grad), OrderedDict())
    state = _user_state(t) or None  # attributes a user set on the tensor travel with it
    if isinstance(t, Parameter):
        data = (_rebuild_tensor, args[:4] + (False, OrderedDict()))
        cls = None if type(t) is Parameter else type(t)
        extra = (cls, state) if state else ((cls,) if cls else ())
        return (_rebuild_parameter, (_Rebuilt(*data), bool(t._requires_grad), OrderedDict(),
                                     *extra))
    if type(t) is not Tensor or state:
        return (_rebuild_tensor, args + (None if type(t) is Tensor else type(t), state))
    return (_rebuild_tensor, args)


class _Rebuilt:
    """A nested reduce value: pickled as ``func(*args)`` (lets a parameter wrap a tensor)."""

    def __init__(self, func: Any, args: tuple) -> None:
        self.func, self.args = func, args

    def __reduce__(self) -> tuple:
        return self.func, self.args


def _rebuild_tensor(storage: np.ndarray, storage_offset: int, size: tuple, stride: tuple,
                    requires_grad: bool, backward_hooks: Any, cls: type | None = None,
                    state: dict | None = None) -> Tensor:
    """A tensor lying in `storage` (a flat array) with element `stride` from `storage_offset`;
    tensors of one storage share it (NOTE [Storage arrays] in ``hookgrad/_tensor.py``).

    Mirrors: ``torch._utils._rebuild_tensor_v2``.
    """
    t = tensor_on_storage(storage, storage_offset, size, stride, requires_grad, cls)
    if state:
        t.__dict__.update(state)
    return t


def _rebuild_parameter(data: Tensor, requires_grad: bool, backward_hooks: Any,
                       cls: type | None = None, state: dict | None = None) -> Parameter:
    """Mirrors: ``torch._utils._rebuild_parameter`` (with ``_rebuild_parameter_with_state``)."""
    p = (Parameter if cls is None else cls)(data, requires_grad)  # shares `data`'s storage
    if state:
        p.__dict__.update(state)
    return p


def _npy_array(payload: bytes, member: str) -> np.ndarray:
    """The array of a ``.npy`` payload, copied once out of the member bytes (writable)."""
    fmt = np.lib.format
    stream = io.BytesIO(payload)
    try:
        version = fmt.read_magic(stream)
        read_header = fmt.read_array_header_1_0 if version == (1, 0) else (
            fmt.read_array_header_2_0)
        shape, fortran_order, dtype = read_header(stream)
        if dtype.hasobject:
            raise ValueError("object arrays are not allowed")
        count = int(np.prod(shape, dtype=np.int64))
        flat = np.frombuffer(payload, dtype=dtype, count=count, offset=stream.tell()).copy()
    except (ValueError, OSError, EOFError) as e:
        raise pickle.UnpicklingError(f"tensor payload {member} is corrupted: {e}") from None
    return flat.reshape(shape, order="F" if fortran_order else "C")


def read_storage(payload: bytes, member: str, dtype_name: str, numel: int) -> np.ndarray:
    """The flat array of one storage member (``.npy``, or raw bytes of a PyTorch ``.storage``)."""
    if member.endswith(".npy"):
        flat = _npy_array(payload, member)
    else:
        flat = np.frombuffer(payload, dtype=np.dtype(dtype_name).newbyteorder("<")).copy()
    if flat.ndim != 1 or flat.dtype.name != np.dtype(dtype_name).name or flat.size != numel:
        raise pickle.UnpicklingError(
            f"tensor payload {member} holds {flat.dtype.name}{list(flat.shape)} but the pickle "
            f"expects {numel} elements of {dtype_name}")
    return flat


def restore_location(flat: np.ndarray, location: str, map_location: Any) -> Any:
    """Apply ``load_pickle``'s `map_location` to one loaded storage recorded at `location`."""
    if callable(map_location):
        moved = map_location(flat, location)
        return flat if moved is None else moved
    if map_location is None:
        # the recorded device, or the CPU when this process has no GPU arrays (spec 6.3)
        return _to_device(flat, location) if _cupy() is not None else flat
    target = map_location.get(location, location) if isinstance(map_location, dict) else str(
        map_location)
    return _to_device(flat, target)


def _cupy() -> Any:
    try:
        import cupy  # noqa: PLC0415 - optional GPU backend
    except ImportError:
        return None
    return cupy


def _to_device(flat: np.ndarray, target: str) -> Any:
    if not target.startswith("cuda"):
        return flat
    cupy = _cupy()
    if cupy is None:
        raise RuntimeError(
            "Attempting to deserialize object on a CUDA device but hookgrad.cuda.is_available() "
            "is False. If you are running on a CPU-only machine, please use load_pickle with "
            "map_location='cpu' to map your storages to the CPU.")
    return cupy.asarray(flat)
