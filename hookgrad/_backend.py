"""The backend seam: one `Backend` object per device type, holding its array library.

Layer 1. NOTE [Backends]
A `Backend` is the one interface between hookgrad and an array library: its array namespace
(``xp``: NumPy for ``cpu``, CuPy for ``cuda``) plus what a namespace lacks - telling its arrays
apart, strided views into an array's memory, host transfer, random streams and the
floating-point error state. Every array operation that is not a ufunc or array-function call
on existing arrays asks `namespace_of`/`namespace_for` (or the backend) for the library to use,
so no code hard-wires ``np.`` for new arrays. NumPy ufuncs and array functions called on
another library's arrays dispatch to it through ``__array_ufunc__``/``__array_function__``
(CuPy implements both), which is why op impls may be written as ``np.exp``.
Backends are registered by device type (`register_backend`); the CPU one is NumPy's. A second
CPU backend whose arrays are not NumPy arrays (``hookgrad.testing.strict_backend``) keeps the
seam honest in the tests. Arrays of one backend never meet another's in one op: `check_same_device`
raises PyTorch's error.
"""

from __future__ import annotations

import functools
import re
import threading
from collections.abc import Callable
from typing import Any

import numpy as np

try:  # NumPy >= 2: the error state lives in a context variable (`NumpyBackend.quiet`)
    from numpy._core._ufunc_config import _extobj_contextvar, _make_extobj

    _IGNORE = _make_extobj(all="ignore")
except (ImportError, AttributeError, TypeError):  # pragma: no cover - older or newer NumPy
    _extobj_contextvar = None
    _IGNORE = None

# Hot paths (the matmul kernel, the engine's rule calls) switch NumPy's floating-point warnings
# off inline: ``token = QUIET_SET(QUIET_STATE) ... QUIET_RESET(token)`` is two C calls, where
# the `Backend.quiet` decorator adds a Python frame per call.
if _extobj_contextvar is not None:
    QUIET_SET, QUIET_RESET, QUIET_STATE = (_extobj_contextvar.set, _extobj_contextvar.reset,
                                           _IGNORE)
else:  # pragma: no cover - older or newer NumPy: the process-wide switch
    QUIET_STATE = {"all": "ignore"}

    def QUIET_SET(state: Any) -> Any:  # noqa: N802
        return np.seterr(**state)

    def QUIET_RESET(token: Any) -> None:  # noqa: N802
        np.seterr(**token)

try:  # pragma: no cover - exercised only where CuPy and a GPU exist
    import cupy as _cupy  # type: ignore[import-not-found]
except Exception:  # noqa: BLE001 - any import failure means "no GPU backend"
    _cupy = None


# PyTorch's device types: any of them names a device (torch.device("meta") is valid on every
# build; libraries construct such devices to compare with); tensors live only where a backend is
_TORCH_DEVICE_TYPES = ("cpu", "cuda", "ipu", "xpu", "mkldnn", "opengl", "opencl", "ideep", "hip",
                       "ve", "fpga", "maia", "xla", "lazy", "vulkan", "mps", "meta", "hpu",
                       "mtia", "privateuseone")


# c10::Device's grammar: a type of letters and underscores, then ``:`` and an index without
# sign or leading zeros
_DEVICE_STRING = re.compile(r"([a-zA-Z_]+)(?::(0|[1-9][0-9]*))?")


def _type_name(obj: Any) -> str:
    return "NoneType" if obj is None else obj.__class__.__name__


def _parse_device_string(text: str) -> tuple[str, int | None]:
    """``"cuda:1"`` -> ("cuda", 1), with PyTorch's RuntimeErrors for malformed strings."""
    if not text:
        raise RuntimeError("Device string must not be empty")
    match = _DEVICE_STRING.fullmatch(text)
    if match is None:
        raise RuntimeError(f"Invalid device string: '{text}'")
    kind, idx = match.group(1), match.group(2)
    if kind not in _TORCH_DEVICE_TYPES and kind not in _BACKENDS:
        raise RuntimeError(
            f"Expected one of {', '.join(_TORCH_DEVICE_TYPES)} device type at start of "
            "device string: " + kind
        )
    return kind, None if idx is None else int(idx)


class device:
    """Where a tensor lives.

    Mirrors: ``torch.device`` (``cpu`` now; ``cuda[:n]`` when CuPy is available).
    """

    __slots__ = ("type", "index")

    def __init__(self, type: Any = "cpu", index: Any = None) -> None:  # noqa: A002
        if isinstance(type, device):
            if index is not None:
                raise TypeError("device(): argument 'type' (position 1) must be str, not "
                                "torch.device")
            self.type, self.index = type.type, type.index
            return
        if isinstance(type, (bytes, bytearray)):  # PyTorch's parser takes bytes as a string
            type = bytes(type).decode()
        if isinstance(type, int) and not isinstance(type, bool):
            # a bare index names the current accelerator's device (CUDA where it exists)
            if type < 0:
                raise RuntimeError("Device index must not be negative")
            if not cuda_available():
                raise RuntimeError("Cannot access accelerator device when none is available.")
            type, index = "cuda", type
        elif not isinstance(type, str):
            raise TypeError("device() received an invalid combination of arguments - got "
                            f"({_type_name(type)}), but expected one of:\n * (torch.device "
                            "device)\n * (str type, int index = -1)")
        if index is not None:
            if not isinstance(index, int) or isinstance(index, bool):
                raise TypeError("device(): argument 'index' (position 2) must be int, not "
                                f"{_type_name(index)}")
            if index < 0:
                raise RuntimeError("Device index must not be negative")
            if ":" in type:
                raise RuntimeError("type (string) must not include an index because index was "
                                   f"passed explicitly: {type}")
        type, parsed = _parse_device_string(type)
        self.type, self.index = type, parsed if index is None else index

    def __eq__(self, other: object) -> bool:
        # PyTorch compares devices only with devices: device("cpu") == "cpu" is False, and a
        # string naming a device type this build lacks ("npu") is not an error (accelerate).
        return (
            isinstance(other, device) and self.type == other.type and self.index == other.index
        )

    def __hash__(self) -> int:
        return hash((self.type, self.index))

    def __repr__(self) -> str:
        if self.index is None:
            return f"device(type='{self.type}')"
        return f"device(type='{self.type}', index={self.index})"

    def __str__(self) -> str:
        return self.type if self.index is None else f"{self.type}:{self.index}"

    # ``with torch.device("meta"):`` makes the device the factories' default inside the block
    def __enter__(self) -> device:
        backend_for(self)  # PyTorch's error for a device that is not available
        _DEFAULT.stack = [*_stack(), self]
        return self

    def __exit__(self, *exc: Any) -> None:
        _DEFAULT.stack = _stack()[:-1]


CPU = device("cpu")

# NOTE [Default device]: the device factories use when given none. `set_default_device`
# sets it for the thread (PyTorch keeps it per thread too); ``with device(...)`` pushes one
# for a block. With neither it is ``cpu``: one attribute read on the factories' path.
_DEFAULT = threading.local()


def _stack() -> list:
    return getattr(_DEFAULT, "stack", [])


def default_device() -> device:
    """The device factories use when given none (NOTE [Default device])."""
    stack = getattr(_DEFAULT, "stack", None)
    if stack:
        return stack[-1]
    return getattr(_DEFAULT, "base", None) or CPU


def set_default_device(dev: device | None) -> None:
    """Make `dev` (None: ``cpu``) the thread's default outside ``with device(...)`` blocks."""
    _DEFAULT.base = dev


class Backend:
    """The interface of one array library behind one device type (NOTE [Backends]).

    Subclasses set `device_type`, `xp` (the array namespace) and `array_type`, and override
    what differs from NumPy's semantics.
    """

    device_type: str = ""
    xp: Any = None
    array_type: type = object
    has_data: bool = True  # False: arrays with a shape and no values (``meta``)

    def owns(self, arr: Any) -> bool:
        """Whether `arr` is an array of this backend."""
        return isinstance(arr, self.array_type)

    def device_of(self, arr: Any) -> device:
        return device(self.device_type)

    def memory_owner(self, arr: Any) -> Any:
        """The array that owns `arr`'s memory (itself when it is not a view)."""
        owner = arr
        while isinstance(owner.base, type(arr)):
            owner = owner.base
        return owner

    def element_offset(self, arr: Any, owner: Any) -> int:
        """Offset of `arr`'s first element from `owner`'s first element, in elements."""
        raise NotImplementedError

    def as_strided(self, flat: Any, size: tuple, byte_strides: tuple) -> Any:
        """A view of the 1-D array `flat`'s memory with the given shape and byte strides."""
        return self.xp.lib.stride_tricks.as_strided(flat, shape=size, strides=byte_strides)

    def to_host(self, arr: Any) -> np.ndarray:
        """A NumPy array with `arr`'s values (`arr` itself when it already is one)."""
        raise NotImplementedError

    def from_host(self, host: np.ndarray, index: int | None = None) -> Any:
        """An array of this backend holding a copy of the NumPy array `host`."""
        raise NotImplementedError

    def quiet(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        """`fn` with floating-point warnings (overflow, invalid, divide) switched off."""
        return np.errstate(all="ignore")(fn)

    def generator(self, bit_generator: Any) -> Any:
        """A random stream drawing from NumPy's `bit_generator` (PCG64) for this backend."""
        return np.random.Generator(bit_generator)


class NumpyBackend(Backend):
    """The ``cpu`` backend: NumPy arrays."""

    device_type = "cpu"
    xp = np
    array_type = np.ndarray

    def owns(self, arr: Any) -> bool:
        return type(arr) is np.ndarray or isinstance(arr, np.ndarray)

    def element_offset(self, arr: Any, owner: Any) -> int:
        delta = arr.__array_interface__["data"][0] - owner.__array_interface__["data"][0]
        return delta // arr.itemsize

    def to_host(self, arr: Any) -> np.ndarray:
        return arr

    def quiet(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        # Setting NumPy's error-state context variable to a state built once costs a fifth
        # of ``np.errstate`` (NOTE [Quiet impls] in _ops/_elementwise.py).
        if _extobj_contextvar is None:  # pragma: no cover
            return np.errstate(all="ignore")(fn)
        var, state = _extobj_contextvar, _IGNORE

        @functools.wraps(fn)
        def inner(*args: Any, **kwargs: Any) -> Any:
            token = var.set(state)
            try:
                return fn(*args, **kwargs)
            finally:
                var.reset(token)

        return inner

    def from_host(self, host: np.ndarray, index: int | None = None) -> Any:
        return np.array(host)


class CupyBackend(Backend):  # pragma: no cover - exercised only where CuPy and a GPU exist
    """The ``cuda`` backend: CuPy arrays (used when CuPy imports and sees a GPU)."""

    device_type = "cuda"

    def __init__(self, cupy: Any) -> None:
        self.xp = cupy
        self.array_type = cupy.ndarray

    def device_of(self, arr: Any) -> device:
        return device("cuda", arr.device.id)

    def element_offset(self, arr: Any, owner: Any) -> int:
        return (arr.data.ptr - owner.data.ptr) // arr.itemsize

    def to_host(self, arr: Any) -> np.ndarray:
        return self.xp.asnumpy(arr)

    def from_host(self, host: np.ndarray, index: int | None = None) -> Any:
        with self.xp.cuda.Device(index or 0):
            return self.xp.asarray(host)


NUMPY = NumpyBackend()
_BACKENDS: dict[str, Backend] = {"cpu": NUMPY}
_OTHERS: list[Backend] = []  # backends other than NumPy, asked in turn by `backend_of`


def register_backend(backend: Backend) -> None:
    """Make `backend` the one for its device type (``device(type)`` then accepts the type)."""
    _BACKENDS[backend.device_type] = backend
    _OTHERS[:] = [b for b in _BACKENDS.values() if b is not NUMPY]


def unregister_backend(device_type: str) -> None:
    """Forget the backend of `device_type` (tests register temporary ones)."""
    if device_type != "cpu":
        _BACKENDS.pop(device_type, None)
        _OTHERS[:] = [b for b in _BACKENDS.values() if b is not NUMPY]


def cuda_available() -> bool:
    if _cupy is None:
        return False
    try:  # pragma: no cover
        return _cupy.cuda.runtime.getDeviceCount() > 0
    except Exception:  # noqa: BLE001
        return False


def backend_for(dev: device, copy: bool = False) -> Backend:
    """The backend of a device (PyTorch's error when the device is not available: `copy` for
    a copy to it, which PyTorch refuses earlier for some device types than an allocation)."""
    found = _BACKENDS.get(dev.type)
    if found is not None:
        return found
    if dev.type == "cuda" and _cupy is not None and cuda_available():  # pragma: no cover
        register_backend(CupyBackend(_cupy))
        return _BACKENDS["cuda"]
    if dev.type == "cuda" and _cupy is not None:  # pragma: no cover - CuPy without a GPU
        raise RuntimeError("Found no NVIDIA driver on your system (CuPy backend unavailable).")
    raise _unavailable(dev.type, copy)


# What a CPU-only PyTorch build raises for a tensor on a device type it lacks (hookgrad without
# CuPy is such a build): the lazy-initialised accelerators assert, the ones loaded as modules
# fail to import, the rest find no kernel for their dispatch key.
_ASSERTING = {"cuda": "CUDA", "xpu": "XPU"}
_INTERNAL = ("opengl", "opencl", "ideep", "mkldnn")
_DISPATCH_KEYS = {"mps": "MPS", "xla": "XLA", "ipu": "IPU", "vulkan": "Vulkan", "lazy": "Lazy",
                  "ve": "VE", "fpga": "FPGA", "maia": "MAIA", "hip": "HIP"}


def _unavailable(kind: str, copy: bool) -> Exception:
    if kind in _ASSERTING:
        return AssertionError(f"Torch not compiled with {_ASSERTING[kind]} enabled")
    if kind == "mtia":
        return AssertionError("Torch not compiled with MTIA enabled. Ensure you have `import "
                              "mtia.host_runtime.torch_mtia` in your python src file and include "
                              "`//mtia/host_runtime/torch_mtia:torch_mtia` as your target "
                              "dependency!")
    if kind in ("hpu", "privateuseone"):
        return ModuleNotFoundError(f"No module named 'torch.{kind}'")
    if copy and kind != "lazy" and (kind in _INTERNAL or kind in _DISPATCH_KEYS):
        return RuntimeError(f"PyTorch is not linked with support for {kind} devices")
    if kind in _INTERNAL:
        return RuntimeError("0 INTERNAL ASSERT FAILED: this build has no backend for device "
                            f"type '{kind}'")
    key = _DISPATCH_KEYS.get(kind, kind)
    return NotImplementedError(
        f"Could not run 'aten::empty.memory_format' with arguments from the '{key}' backend. "
        f"hookgrad has no backend for device type '{kind}' (tensors live on "
        f"{', '.join(sorted(_BACKENDS))})")


def backend_of(arr: Any) -> Backend:
    """The backend whose array `arr` is (NumPy's for NumPy arrays and anything unknown)."""
    if type(arr) is np.ndarray:
        return NUMPY
    for b in _OTHERS:
        if b.owns(arr):
            return b
    if _cupy is not None and isinstance(arr, _cupy.ndarray):  # pragma: no cover
        return backend_for(device("cuda"))
    return NUMPY


def namespace_for(dev: device) -> Any:
    """The array module for a device."""
    return NUMPY.xp if dev.type == "cpu" else backend_for(dev).xp


def namespace_of(arr: Any) -> Any:
    """The array module that owns `arr` (NumPy for NumPy arrays)."""
    if type(arr) is np.ndarray:
        return np
    return backend_of(arr).xp


def device_of(arr: Any) -> device:
    if type(arr) is np.ndarray:
        return CPU
    return backend_of(arr).device_of(arr)


def has_data(arr: Any) -> bool:
    """Whether `arr` holds values (a ``meta`` array does not: checks on values skip it, as
    PyTorch's meta kernels skip them)."""
    # (NumPy scalars too: reductions such as a loss's weight total return them, on hot paths)
    return type(arr) is np.ndarray or isinstance(arr, np.generic) or backend_of(arr).has_data


def to_numpy(arr: Any) -> np.ndarray:
    """Host copy (or the array itself when it already is on the host)."""
    if type(arr) is np.ndarray:
        return arr
    b = backend_of(arr)
    return b.to_host(arr) if b is not NUMPY else np.asarray(arr)


def move(arr: Any, dev: device) -> Any:
    """`arr`'s values on device `dev` (the array itself when it is there already)."""
    src = backend_of(arr)
    dst = backend_for(dev, copy=True)
    # one CPU device ("cpu" and "cpu:0" alike); other backends may hold several devices
    if src is dst and (src is NUMPY or src.device_of(arr) == dev):
        return arr
    return dst.from_host(src.to_host(arr), dev.index)


def check_same_device(arrays: Any) -> None:
    """PyTorch's error for one op given arrays of two devices."""
    first = None
    for a in arrays:
        if type(a) is np.ndarray and a.ndim == 0:
            continue  # a 0-d CPU tensor may join an op on any device, as in PyTorch
        d = device_of(a)
        if first is None:
            first = d
        elif d != first:
            raise RuntimeError(
                "Expected all tensors to be on the same device, but found at least two "
                f"devices, {first} and {d}!"
            )


def memory_owner(arr: Any) -> Any:
    """The array that owns `arr`'s memory (itself when it is not a view)."""
    return backend_of(arr).memory_owner(arr)


def element_offset(arr: Any, owner: Any) -> int:
    """Offset of `arr`'s first element from `owner`'s first element, in elements."""
    return backend_of(arr).element_offset(arr, owner)


def as_strided(arr: Any, size: tuple, stride: tuple, storage_offset: int) -> Any:
    """View of the memory under `arr` with element strides, offset from `arr`'s first element.

    Mirrors ``Tensor.as_strided`` where the storage starts at `arr`'s first element.
    """
    b = backend_of(arr)
    owner = b.memory_owner(arr)
    # the owner's memory in memory order: its axes by decreasing stride are C-contiguous even
    # when it was allocated in another layout (channels_last, a column-major LAPACK result)
    order = sorted(range(owner.ndim), key=lambda d: -owner.strides[d])
    flat = owner.transpose(order).reshape(-1)
    start = b.element_offset(arr, owner) + storage_offset
    item = arr.itemsize
    return b.as_strided(flat[start:], tuple(size), tuple(s * item for s in stride))
