"""Tensor factories: ``tensor``, ``zeros``, ``arange``, ``*_like``, ``Tensor.new_*``...

Layer 4. Dtype inference follows PyTorch's ``infer_scalar_type``: Python ``bool``/``int``/
``float`` give bool/int64/the default dtype, NumPy scalars and arrays and tensors keep their
dtype, and a nested sequence promotes the dtypes of its items (``[np.float32(1), 2]`` is
float32). Range values come from `_ranges` (bit-exact with PyTorch's CPU kernels).
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from hookgrad import _backend
from hookgrad._backend import device as _device
from hookgrad._backend import namespace_for
from hookgrad._config import GLOBAL, STATE
from hookgrad._dispatch import note_write
from hookgrad._dtypes import (
    check_kernel,
    default_complex_dtype,
    bool_,
    dtype,
    from_numpy_dtype,
    int64,
    to_dtype,
)
from hookgrad._ops import _ranges
from hookgrad._functional._views import UNSET, one_spelling
from hookgrad._memory_format import as_format, check_rank, empty_for, format_name
from hookgrad._runtime import fill_uninitialized_
from hookgrad._functional._nested import (  # noqa: F401 - re-exported helpers
    _scalar_dtype,
    _is_seq,
    _chain_shape,
    _infer,
    _unwrap,
    _INT64,
    MAX_DIMS,
    _check_fits,
    _python_numbers,
    _infer_all,
    check_leaves,
)
from hookgrad._tensor import Tensor

__all__ = [
    "tensor", "as_tensor", "from_numpy", "zeros", "ones", "full", "empty", "zeros_like",
    "ones_like", "full_like", "empty_like", "arange", "linspace", "eye", "scalar_tensor",
    "is_tensor", "is_floating_point", "numel",
]

_REQUIRES_GRAD_ERROR = "Only Tensors of floating point and complex dtype can require gradients"


def _xp(device: Any) -> Any:
    return namespace_for(_device(device) if device is not None else _backend.default_device())


def meta_factory(device: Any, shape: tuple, np_dtype: Any, requires_grad: bool) -> Tensor | None:
    """A new ``meta`` tensor when `device` (or the default device) is ``meta``, else None.

    Random factories ask first: a meta tensor has no values, so none are drawn (PyTorch's meta
    kernels leave the generator alone too), whatever the size.
    """
    dev = _backend.default_device() if device is None else _device(device)
    if dev.type != "meta":
        return None
    return _finish(namespace_for(dev).empty(shape, dtype=np_dtype), requires_grad)


def _like_device(t: Tensor, device: Any) -> Any:
    return t.device if device is None else device


def _finish(arr: Any, requires_grad: bool) -> Tensor:
    t = Tensor._make(arr)
    if requires_grad:
        if arr.dtype.kind not in "fcV":
            raise RuntimeError(_REQUIRES_GRAD_ERROR)
        t._requires_grad = True
    return t


def tensor(data: Any, *, dtype: Any = None, device: Any = None, requires_grad: bool = False,
           pin_memory: bool = False) -> Tensor:
    """Copy `data` (number, nested sequence, NumPy array, tensor) into a new leaf tensor.

    Args:
        data: The values; nested sequences must be rectangular.
        dtype: Result dtype; inferred as PyTorch does when omitted (see module docstring).
        device: Where the result lives.
        requires_grad: Make the result a leaf that requires grad (floating dtypes only).

    Raises:
        ValueError: ragged nested sequences, or Python ints beyond int64.
        RuntimeError: values that overflow an explicit integral `dtype`; `requires_grad` on a
            non-floating dtype.

    Example:
        >>> import hookgrad as torch
        >>> torch.tensor([[1, 2], [3, 4.5]])
        tensor([[1.0000, 2.0000],
                [3.0000, 4.5000]])

    Mirrors: ``torch.tensor``.
    """
    if isinstance(data, Tensor):
        warnings.warn(
            "To copy construct from a tensor, it is recommended to use sourceTensor.detach()."
            "clone() or sourceTensor.detach().clone().requires_grad_(True), rather than "
            "torch.tensor(sourceTensor).", UserWarning, stacklevel=2)
    if isinstance(data, np.ndarray):
        _check_numpy(data)
    public_dtype(dtype, "tensor")
    if device is not None:  # data is copied to the device: PyTorch's error for a copy to it
        _backend.backend_for(_device(device), copy=True)
    if type(requires_grad) is not bool:
        raise TypeError("tensor(): argument 'requires_grad' must be bool, not "
                        f"{type(requires_grad).__name__}")
    if isinstance(data, bytes):
        raise TypeError("new(): invalid data type 'bytes'")
    if isinstance(data, bytearray):  # a mutable sequence of ints to PyTorch (bytes are not)
        data = list(data)
    arr = _fast_list(data, dtype)
    if arr is None:
        shape = _chain_shape(data)
        if len(shape) > MAX_DIMS:  # NumPy's limit (PyTorch's is 128)
            raise ValueError(f"too many dimensions '{type(data).__name__}'")
        if 0 in shape:
            return _empty_from_nested(data, shape, dtype, device, requires_grad)
        if dtype is not None:  # converted element by element: PyTorch's per-element errors
            check_leaves(data, to_dtype(dtype))
        inferred = _infer(data, 0, shape)
        d = to_dtype(dtype) if dtype is not None else (inferred or GLOBAL.default_dtype)
        raw = _unwrap(data)
        if d is not bool_ and _python_numbers(data):
            _check_fits(raw, d, d.name)
        arr = _to_array(raw, d)
    xp = _xp(device)
    return _finish(arr if xp is np else xp.asarray(arr), requires_grad)


def _empty_from_nested(data: Any, shape: list, dtype: Any, device: Any,
                       requires_grad: bool) -> Tensor:
    """Nested data whose first chain has an empty sequence: PyTorch reads the shape off that
    chain alone (``tensor([[], [1]])`` is a 2x0 tensor) and never visits the other elements
    for their values, only for their dtype."""
    inferred = _infer_all(data)
    d = to_dtype(dtype) if dtype is not None else inferred
    return _finish(_xp(device).zeros(tuple(shape), dtype=d.np), requires_grad)


_PY_NUMBERS = {float, int, bool}


def _leaf_types(data: list, depth: int) -> set | None:
    """Types of the leaves of a rectangular nested list (None: not plain nested lists)."""
    if depth == 1:
        return set(map(type, data))
    out: set = set()
    for row in data:
        if type(row) is not list:
            return None
        sub = _leaf_types(row, depth - 1)
        if sub is None:
            return None
        out |= sub
    return out


def _fast_list(data: Any, dtype: Any) -> np.ndarray | None:
    """Fast path for (nested) lists of Python floats/ints/bools: NumPy builds, we pick dtype."""
    if type(data) is not list or not data:
        return None
    target = None if dtype is None else to_dtype(dtype)
    if target is not None and not (target.is_floating_point or target in (int64, bool_)):
        return None  # small integral targets need PyTorch's overflow checks
    try:
        arr = np.array(data)
    except (ValueError, OverflowError, RuntimeError):
        return None  # ragged, huge ints, tensors that require grad: the slow path
    if arr.dtype.kind not in "bif" or arr.ndim == 0:
        return None  # "u": ints beyond int64, which the slow path refuses as PyTorch does
    types = _leaf_types(data, arr.ndim)
    if types is None or not types <= _PY_NUMBERS:
        return None
    if target is not None:
        d = target
        if d is int64 and arr.dtype.kind == "f" and not _fits_int64(arr):
            return None  # NaN, infinities or huge floats: the slow path raises
    elif float in types or not types:  # [[]] has no leaves: the default dtype
        d = GLOBAL.default_dtype
    else:
        d = int64 if int in types else bool_
    if arr.dtype == d.np:
        return arr
    with np.errstate(over="ignore", invalid="ignore"):
        return arr.astype(d.np)


def _fits_int64(arr: np.ndarray) -> bool:
    return bool(np.isfinite(arr).all() and (np.abs(arr) < 2.0**63).all())


def _to_array(raw: Any, d: dtype) -> np.ndarray:
    """NumPy array of dtype `d`; Python ints wrap into small integral types like PyTorch's."""
    try:
        with np.errstate(over="ignore", invalid="ignore"):
            return np.array(raw, dtype=d.np)
    except OverflowError:
        pass
    except TypeError as e:  # a Python complex for a floating dtype: PyTorch's message
        if "complex" in str(e) and d.is_floating_point:
            raise TypeError("must be real number, not complex") from None
        raise
    try:
        wide = np.array(raw, dtype=np.int64)
    except OverflowError:
        raise ValueError("Overflow when unpacking long long") from None
    return wide.astype(d.np)


def _check_numpy(arr: np.ndarray) -> None:
    if not arr.dtype.isnative:
        raise ValueError("given numpy array has byte order different from the native byte "
                         "order. Conversion between byte orders is currently not supported.")
    from_numpy_dtype(arr.dtype)


_WARNED_READONLY = False


def _type_name(obj: Any) -> str:
    """CPython's ``tp_name``: ``list``, ``numpy.float64``..."""
    cls = type(obj)
    return cls.__name__ if cls.__module__ == "builtins" else f"{cls.__module__}.{cls.__name__}"


def from_numpy(ndarray: np.ndarray) -> Tensor:
    """A tensor sharing memory with `ndarray` (writes show through both ways).

    Raises:
        TypeError: not an ndarray, or an unsupported dtype.
        ValueError: negative strides or non-native byte order.

    Mirrors: ``torch.from_numpy`` (warns once about read-only arrays, as PyTorch does).
    """
    global _WARNED_READONLY
    if not isinstance(ndarray, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {_type_name(ndarray)})")
    _check_numpy(ndarray)
    if any(s < 0 for s in ndarray.strides):
        raise ValueError(
            "At least one stride in the given numpy array is negative, and tensors with "
            "negative strides are not currently supported. (You can probably work around this "
            "by making a copy of your array  with array.copy().) ")
    if not ndarray.flags.writeable and not _WARNED_READONLY:
        _WARNED_READONLY = True
        warnings.warn(
            "The given NumPy array is not writable, and PyTorch does not support non-writable "
            "tensors. This means writing to this tensor will result in undefined behavior. You "
            "may want to copy the array to protect its data or make it writable before "
            "converting it to a tensor. This type of warning will be suppressed for the rest of "
            "this program.", UserWarning, stacklevel=2)
    return Tensor._make(ndarray)


def as_tensor(data: Any, dtype: Any = None, device: Any = None) -> Tensor:
    """`data` as a tensor, sharing memory with a tensor or NumPy array whenever possible.

    Example:
        >>> import hookgrad as torch, numpy as np
        >>> a = np.zeros(2); t = torch.as_tensor(a); a[0] = 5; t
        tensor([5., 0.], dtype=torch.float64)

    Mirrors: ``torch.as_tensor``.
    """
    if isinstance(data, Tensor):
        if dtype is None and device is None:
            return data
        return data.to(dtype=dtype, device=device)  # type: ignore[attr-defined]
    if isinstance(data, np.ndarray):
        t = from_numpy(data)
        if dtype is not None and to_dtype(dtype) is not t.dtype:
            return Tensor._make(data.astype(to_dtype(dtype).np))
        return t
    return tensor(data, dtype=dtype, device=device)


# ------------------------------------------------------------------ shaped factories
def _size_arg(size: tuple, fn: str) -> tuple:
    """``f(2, 3)``, ``f((2, 3))``, ``f([2, 3])``, ``f(torch.Size(...))`` -> a shape tuple."""
    if len(size) == 1 and not _is_int(size[0]):
        seq = size[0]
        if not isinstance(seq, (tuple, list)):
            raise TypeError(f"{fn}(): argument 'size' (position 1) must be tuple of ints, not "
                            f"{type(seq).__name__}")
        for i, s in enumerate(seq):
            if not _is_int(s):
                raise TypeError(f"{fn}(): argument 'size' (position 1) must be tuple of ints, "
                                f"but found element of type {type(s).__name__} at pos {i}")
        size = tuple(seq)
    else:
        for i, s in enumerate(size):
            if not _is_int(s):
                raise TypeError(f"{fn}(): argument 'size' failed to unpack the object at pos "
                                f"{i + 1} with error \"type must be tuple of ints,but got "
                                f"{type(s).__name__}\"")
    return _shape(size, fn)


def _is_int(x: Any) -> bool:
    if isinstance(x, bool):
        return False
    if isinstance(x, Tensor):
        return x._data.ndim == 0 and x._data.dtype.kind in "iu"
    return isinstance(x, (int, np.integer))


def _shape(size: tuple, fn: str = "") -> tuple:
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = tuple(size[0])
    out = tuple(int(s) for s in size)
    for i, s in enumerate(out):
        if not _INT64.min <= s <= _INT64.max:
            raise TypeError(f"{fn or 'tensor'}(): argument 'size' failed to unpack the object at "
                            f"pos {i + 1} with error \"Overflow when unpacking long long\"")
    if any(s < 0 for s in out):
        if fn == "zeros":  # PyTorch's zeros has its own check and text
            raise RuntimeError("zeros: Dimension size must be non-negative.")
        neg = next(s for s in out if s < 0)
        raise RuntimeError(f"Trying to create tensor with negative dimension {neg}: {list(out)}")
    return out


def public_dtype(value: Any, fn: str) -> None:
    """PyTorch's factories take a ``torch.dtype`` (or Python's ``float``/``int``/``bool``)."""
    if value is None or isinstance(value, dtype) or value is float or value is int or \
            value is bool:
        return
    if value is complex:
        return
    raise TypeError(f"{fn}(): argument 'dtype' must be torch.dtype, not {type(value).__name__}")


def _dt(dtype_: Any) -> dtype:
    public_dtype(dtype_, "factory")
    return GLOBAL.default_dtype if dtype_ is None else to_dtype(dtype_)


def _write_out(out: Tensor | None, result: Tensor) -> Tensor:
    """``out=``: copy into `out` (rebinding its array when the shape changes, like resize_)."""
    if out is None:
        return result
    if not isinstance(out, Tensor):  # PyTorch's argument parser
        raise TypeError(f"argument 'out' must be Tensor, not {type(out).__name__}")
    if out.requires_grad and STATE.grad_enabled:
        raise RuntimeError("functions with out=... arguments don't support automatic "
                           "differentiation, but one of the arguments requires grad.")
    if out._data.shape == result._data.shape:
        out._data[...] = result._data
    else:
        out._data = result._data.astype(out._data.dtype)
    note_write(out)
    return out


def _filled(fn: str, size: tuple, value: Any, dtype: Any, device: Any, requires_grad: bool,
            out: Any) -> Tensor:
    if not size and out is None:
        raise TypeError(f'{fn}() missing 1 required positional arguments: "size"')
    shape = _size_arg(size, fn) if size else ()
    d = _dt(dtype)
    arr = _allocate(lambda: _xp(device).full(shape, _to_array(value, d), dtype=d.np), shape, d)
    return _write_out(out, _finish(arr, requires_grad))


def _allocate(make: Any, shape: tuple, d: dtype) -> Any:
    """Run `make`; an allocation the machine cannot satisfy is PyTorch's RuntimeError."""
    try:
        return make()
    except (MemoryError, ValueError) as e:
        if isinstance(e, ValueError) and "dimension" not in str(e) and "too big" not in str(e):
            raise
        nbytes = d.np.itemsize
        for s in shape:
            nbytes *= s
        raise RuntimeError(f"DefaultCPUAllocator: can't allocate memory: you tried to allocate "
                           f"{nbytes} bytes.") from None


def zeros(*size: Any, out: Any = None, dtype: Any = None, layout: Any = None, device: Any = None,
          pin_memory: bool = False, requires_grad: bool = False, **kwargs: Any) -> Tensor:
    """A tensor of zeros: ``zeros(2, 3)`` or ``zeros((2, 3))``.

    Example:
        >>> import hookgrad as torch
        >>> torch.zeros(2, 3).shape
        torch.Size([2, 3])

    Mirrors: ``torch.zeros``.
    """
    size = size or _kw_size(kwargs, "zeros", layout)
    check_factory_kwargs("zeros", kwargs, layout)
    return _filled("zeros", size, 0, dtype, device, requires_grad, out)


def _kw_size(kwargs: dict, fn: str = "", layout: Any = None) -> tuple:
    """The ``size=`` keyword; PyTorch's TypeErrors for other unknown keywords and bad layouts."""
    size = (kwargs.pop("size"),) if "size" in kwargs else ()
    check_factory_kwargs(fn, kwargs, layout)
    return size


def check_factory_kwargs(fn: str, kwargs: dict, layout: Any = None) -> None:
    """PyTorch's TypeErrors of factories: unknown keywords, a layout that is not one."""
    for name in kwargs:
        raise TypeError(f"{fn}() got an unexpected keyword argument '{name}'")
    if layout is not None and type(layout).__name__ != "layout":  # (_legacy imports us)
        raise TypeError(f"{fn}(): argument 'layout' must be torch.layout, not "
                        f"{type(layout).__name__}")
    reason = getattr(layout, "__hookgrad_unsupported__", None)  # torch.sparse_coo, jagged, ...
    if reason is not None:
        raise NotImplementedError(reason)


def ones(*size: Any, out: Any = None, dtype: Any = None, layout: Any = None, device: Any = None,
         pin_memory: bool = False, requires_grad: bool = False, **kwargs: Any) -> Tensor:
    """A tensor of ones. Mirrors: ``torch.ones``."""
    size = size or _kw_size(kwargs, "ones", layout)
    check_factory_kwargs("ones", kwargs, layout)
    return _filled("ones", size, 1, dtype, device, requires_grad, out)


def empty(*size: Any, out: Any = None, dtype: Any = None, layout: Any = None, device: Any = None,
          pin_memory: bool = False, requires_grad: bool = False, memory_format: Any = None,
          **kwargs: Any) -> Tensor:
    """An "uninitialised" tensor. Mirrors: ``torch.empty`` (zero-filled, never garbage)."""
    size = size or _kw_size(kwargs, "empty", layout)
    check_factory_kwargs("empty", kwargs, layout)
    name = "contiguous_format" if memory_format is None else format_name(memory_format)
    if name == "preserve_format":
        raise RuntimeError("unsupported memory format Preserve")
    result = _filled("empty", size, 0, dtype, device, requires_grad, out)
    if name != "contiguous_format" and out is None:
        check_rank(name, result._data.ndim)
        result._data = as_format(result._data, name)
    if out is None:
        fill_uninitialized_(result._data)
    return result


def _fill_dtype(fill_value: Any) -> dtype:
    bad = isinstance(fill_value, Tensor) and fill_value._data.ndim != 0
    if bad or not (isinstance(fill_value, (int, float, complex, Tensor, np.generic))):
        raise TypeError("full(): argument 'fill_value' (position 2) must be Number, not "
                        f"{type(fill_value).__name__}")
    if isinstance(fill_value, bool):
        return bool_
    if isinstance(fill_value, (int, np.integer)):
        return int64
    if isinstance(fill_value, (complex, np.complexfloating)):
        return default_complex_dtype()
    return GLOBAL.default_dtype


def full(size: Any, fill_value: Any, *, out: Any = None, dtype: Any = None, layout: Any = None,
         device: Any = None, pin_memory: bool = False, requires_grad: bool = False) -> Tensor:
    """A tensor filled with `fill_value`; its dtype is inferred from it when omitted.

    Example:
        >>> import hookgrad as torch
        >>> torch.full((2,), 7)
        tensor([7, 7])

    Mirrors: ``torch.full``.
    """
    if not isinstance(size, (tuple, list)):
        raise TypeError("full(): argument 'size' (position 1) must be tuple of ints, not "
                        f"{type(size).__name__}")
    inferred = _fill_dtype(fill_value)
    if isinstance(fill_value, Tensor):  # a 0-d tensor counts as the Python number it holds
        fill_value = fill_value.item()
        inferred = _fill_dtype(fill_value)
    d = inferred if dtype is None else to_dtype(dtype)
    _check_fits(fill_value, d, _C_TYPES.get(d.name, d.name), unpack=False)
    return _filled("full", (tuple(size),), fill_value, d, device, requires_grad, out)


_C_TYPES = {"int64": "int64_t", "int32": "int32_t", "int16": "int16_t", "int8": "int8_t",
            "uint8": "uint8_t"}


# Set by vmap (hookgrad/_functorch/_batched.py): ``hook(source, result)`` gives the result of a
# ``*_like``/``new_*`` factory of a vmap-batched `source` a batch dimension, as PyTorch does.
BATCHED_LIKE: list = [None]


def _batched_like(source: Any, out: Tensor) -> Tensor:
    hook = BATCHED_LIKE[0]
    return out if hook is None else hook(source, out)


def _like(fn: str, input: Any, value: Any, dtype: Any, device: Any,
          requires_grad: bool, memory_format: Any = None) -> Tensor:
    if not isinstance(input, Tensor):
        raise TypeError(f"{fn}(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    d = input.dtype if dtype is None else to_dtype(dtype)
    src = input._data
    name = format_name(memory_format)
    check_rank(name, src.ndim)
    if type(src) is np.ndarray and (device is None or _device(device) == input.device):
        arr = empty_for(src, name, d.np)  # preserve_format keeps a dense input's strides
        arr[...] = value
    elif input.is_meta and (device is None or _device(device).type == "meta"):
        arr = _backend.backend_of(src).empty_for(src, name, d.np)  # the same layout rule
    else:
        arr = _xp(_like_device(input, device)).full(src.shape, value, dtype=d.np)
    return _batched_like(input, _finish(arr, requires_grad))


def zeros_like(input: Tensor, *, dtype: Any = None, layout: Any = None, device: Any = None,
               requires_grad: bool = False, memory_format: Any = None) -> Tensor:
    """Zeros with `input`'s shape, dtype and device. Mirrors: ``torch.zeros_like``."""
    return _like("zeros_like", input, 0, dtype, device, requires_grad, memory_format)


def ones_like(input: Tensor, *, dtype: Any = None, layout: Any = None, device: Any = None,
              requires_grad: bool = False, memory_format: Any = None) -> Tensor:
    """Ones with `input`'s shape, dtype and device. Mirrors: ``torch.ones_like``."""
    return _like("ones_like", input, 1, dtype, device, requires_grad, memory_format)


def empty_like(input: Tensor, *, dtype: Any = None, layout: Any = None, device: Any = None,
               requires_grad: bool = False, memory_format: Any = None) -> Tensor:
    """Mirrors: ``torch.empty_like`` (zero-filled; NaN/max-filled in deterministic mode)."""
    result = _like("empty_like", input, 0, dtype, device, requires_grad, memory_format)
    fill_uninitialized_(result._data)
    return result


def full_like(input: Tensor, fill_value: Any, *, dtype: Any = None, layout: Any = None,
              device: Any = None, requires_grad: bool = False,
              memory_format: Any = None) -> Tensor:
    """`fill_value` with `input`'s shape, dtype and device. Mirrors: ``torch.full_like``."""
    if not isinstance(fill_value, (int, float, complex, np.generic)) and not (
            isinstance(fill_value, Tensor) and fill_value._data.ndim == 0):
        raise TypeError("full_like(): argument 'fill_value' (position 2) must be Number, not "
                        f"{type(fill_value).__name__}")
    return _like("full_like", input, fill_value, dtype, device, requires_grad, memory_format)


# ------------------------------------------------------------------ ranges
def _number(x: Any, fn: str, arg: str, pos: int) -> Any:
    if isinstance(x, Tensor):
        if x._data.ndim != 0:
            raise TypeError(f"{fn}(): argument '{arg}' (position {pos}) must be Number, not "
                            "Tensor")
        return x.item()
    if isinstance(x, np.generic):
        return x.item()
    if not isinstance(x, (int, float)):
        raise TypeError(f"{fn}(): argument '{arg}' (position {pos + 1}) must be Number, not "
                        f"{type(x).__name__}")
    if isinstance(x, int) and not _INT64.min <= x <= _INT64.max:
        raise OverflowError("int too big to convert")
    return x


def arange(start: Any, end: Any = None, step: Any = 1, *, out: Any = None, dtype: Any = None,
           layout: Any = None, device: Any = None, pin_memory: bool = False,
           requires_grad: bool = False) -> Tensor:
    """Values ``start, start + step, ...`` below `end` (int64 for integer arguments).

    The element count is ``ceil((end - start) / step)`` in float64, as in PyTorch, and values
    are bit-exact with PyTorch's CPU kernel (NOTE [Range factory rounding] in `_ranges`).

    Example:
        >>> import hookgrad as torch
        >>> torch.arange(1, 2.5, 0.5)
        tensor([1.0000, 1.5000, 2.0000])

    Mirrors: ``torch.arange``.
    """
    if isinstance(out, Tensor) and out._data.dtype.kind == "b":  # no bool kernel
        raise NotImplementedError("\"arange_cpu\" not implemented for 'Bool'")
    if end is None:
        start, end = 0, start
    start = _number(start, "arange", "start", 0)
    end = _number(end, "arange", "end", 1)
    step = _number(step, "arange", "step", 2)
    if dtype is None:
        ints = all(isinstance(v, int) for v in (start, end, step))
        d = int64 if ints else GLOBAL.default_dtype
    else:
        d = to_dtype(dtype)
    if d is bool_ or d.is_complex:
        raise NotImplementedError(f"\"arange_cpu\" not implemented for '{d.scalar_type}'")
    check_kernel("arange", d.np)
    n = _ranges.arange_size(start, end, step, d is int64)
    if (meta := meta_factory(device, (n,), d.np, requires_grad)) is not None:
        return _write_out(out, meta)  # no values to compute
    arr = _ranges.arange_values(start, step, n, d.np)
    xp = _xp(device)
    return _write_out(out, _finish(arr if xp is np else xp.asarray(arr), requires_grad))


def linspace(start: Any, end: Any, steps: int, *, out: Any = None, dtype: Any = None,
             layout: Any = None, device: Any = None, pin_memory: bool = False,
             requires_grad: bool = False) -> Tensor:
    """`steps` evenly spaced values from `start` to `end` inclusive.

    Example:
        >>> import hookgrad as torch
        >>> torch.linspace(0, 1, 5)
        tensor([0.0000, 0.2500, 0.5000, 0.7500, 1.0000])

    Mirrors: ``torch.linspace`` (bit-exact with PyTorch's CPU kernel).
    """
    start = _number(start, "linspace", "start", 0)
    end = _number(end, "linspace", "end", 1)
    if not _is_int(steps):
        raise TypeError("linspace() received an invalid combination of arguments - got "
                        f"({type(start).__name__}, {type(end).__name__}, "
                        f"{type(steps).__name__})")
    steps = int(steps)
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    d = _dt(dtype)
    if d is bool_:
        raise NotImplementedError("\"linspace_cpu\" not implemented for 'Bool'")
    check_kernel("linspace", d.np)
    for value in (start, end):
        _check_fits(value, d, _C_TYPES.get(d.name, d.name))
    if (meta := meta_factory(device, (steps,), d.np, requires_grad)) is not None:
        return _write_out(out, meta)  # no values to compute
    arr = _ranges.linspace_values(start, end, steps, d.np)
    xp = _xp(device)
    return _write_out(out, _finish(arr if xp is np else xp.asarray(arr), requires_grad))


def eye(n: int, m: int | None = None, *, out: Any = None, dtype: Any = None,
        layout: Any = None, device: Any = None, pin_memory: bool = False,
        requires_grad: bool = False) -> Tensor:
    """An ``n x m`` identity matrix. Mirrors: ``torch.eye``."""
    for name, value in (("n", n), ("m", m)):
        if value is not None and not _is_int(value):
            raise TypeError(f"eye(): argument '{name}' (position {1 if name == 'n' else 2}) "
                            f"must be int, not {type(value).__name__}")
        if value is not None and value < 0:
            raise RuntimeError(f"{name} must be greater or equal to 0, got {value}")
    arr = _xp(device).eye(int(n), None if m is None else int(m), dtype=_dt(dtype).np)
    return _write_out(out, _finish(arr, requires_grad))


def scalar_tensor(s: Any, *, dtype: Any = None, layout: Any = None, device: Any = None,
                  pin_memory: bool = False, requires_grad: bool = False) -> Tensor:
    """A 0-d tensor of the default dtype (whatever the type of `s`).

    Mirrors: ``torch.scalar_tensor``.
    """
    return _finish(_xp(device).asarray(s, dtype=_dt(dtype).np), requires_grad)


# ------------------------------------------------------------------ queries
def is_tensor(obj: Any) -> bool:
    """Whether `obj` is a hookgrad tensor. Mirrors: ``torch.is_tensor``."""
    return isinstance(obj, Tensor)


def is_floating_point(input: Tensor) -> bool:
    """Whether `input` has a floating dtype. Mirrors: ``torch.is_floating_point``."""
    if not isinstance(input, Tensor):
        raise TypeError("is_floating_point(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    return input.is_floating_point()


def numel(input: Tensor) -> int:
    """Number of elements of `input`. Mirrors: ``torch.numel``."""
    if not isinstance(input, Tensor):
        raise TypeError(f"numel(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    return input.numel()


# ------------------------------------------------------------------ Tensor.new_*
def _new(fn: Any, name: str) -> Any:
    def method(self: Tensor, *sizes: Any, size: Any = UNSET, dtype: Any = None,
               device: Any = None, requires_grad: bool = False, layout: Any = None,
               pin_memory: bool = False) -> Tensor:
        sizes = one_spelling(sizes, size, name)
        return _batched_like(self, fn(*sizes, dtype=self.dtype if dtype is None else dtype,
                                      device=_like_device(self, device),
                                      requires_grad=requires_grad))

    method.__name__ = method.__qualname__ = name
    method.__doc__ = f"``{fn.__name__}`` with this tensor's dtype and device.\n\n" \
                     f"Mirrors: ``torch.Tensor.{name}``."
    return method


def new_full(self: Tensor, size: Any, fill_value: Any, *, dtype: Any = None,
             device: Any = None, requires_grad: bool = False, layout: Any = None,
             pin_memory: bool = False) -> Tensor:
    """`full` with this tensor's dtype and device. Mirrors: ``torch.Tensor.new_full``."""
    return _batched_like(self, full(size, fill_value, dtype=self.dtype if dtype is None else dtype,
                                    device=_like_device(self, device),
                                    requires_grad=requires_grad))


def new_tensor(self: Tensor, data: Any, *, dtype: Any = None, device: Any = None,
               requires_grad: bool = False, layout: Any = None,
               pin_memory: bool = False) -> Tensor:
    """`tensor` with this tensor's dtype and device. Mirrors: ``torch.Tensor.new_tensor``."""
    if isinstance(data, Tensor):
        warnings.warn(
            "To copy construct from a tensor, it is recommended to use sourceTensor.detach()."
            "clone() or sourceTensor.detach().clone().requires_grad_(True), rather than "
            "tensor.new_tensor(sourceTensor).", UserWarning, stacklevel=2)
        data = _backend.to_numpy(data._data)
    return tensor(data, dtype=self.dtype if dtype is None else dtype,
                  device=_like_device(self, device), requires_grad=requires_grad)


METHODS = {
    "new_zeros": _new(zeros, "new_zeros"), "new_ones": _new(ones, "new_ones"),
    "new_empty": _new(empty, "new_empty"), "new_full": new_full, "new_tensor": new_tensor,
}
