"""Reading nested Python data for ``tensor()``: its shape, its dtype, its range checks.

PyTorch reads the shape off the first element at every depth, infers the dtype by promoting
every leaf (an empty sequence counts as the default dtype), and checks Python numbers against
an integral target dtype one by one; this module does the same on plain Python data.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from hookgrad import _backend
from hookgrad._config import GLOBAL
from hookgrad._dtypes import (
    bool_,
    default_complex_dtype,
    dtype,
    from_numpy_dtype,
    int64,
    promote_types,
    uint64,
)
from hookgrad._tensor import Tensor

# ------------------------------------------------------------------ dtype inference
def _scalar_dtype(x: Any) -> dtype | None:
    """dtype of one leaf of ``tensor(data)``; None when `x` is a sequence."""
    if isinstance(x, (Tensor, np.ndarray, np.generic)):
        # checked first: np.float64 is a Python float, but keeps its own dtype
        return from_numpy_dtype(x.dtype) if not isinstance(x, Tensor) else x.dtype
    if isinstance(x, bool):
        return bool_
    if isinstance(x, int):
        return int64
    if isinstance(x, float):
        return GLOBAL.default_dtype
    if x is None:
        raise RuntimeError("Could not infer dtype of NoneType")
    if isinstance(x, str):
        raise TypeError("new(): invalid data type 'str'")
    if isinstance(x, complex):
        return default_complex_dtype()
    return None


def _is_seq(x: Any) -> bool:
    return isinstance(x, (list, tuple, range)) or (
        isinstance(x, Sequence) and not isinstance(x, (str, bytes)))


def _chain_shape(data: Any) -> list:
    """The shape PyTorch reads off the first element at every depth."""
    shape: list = []
    while True:
        if isinstance(data, np.ndarray) or (isinstance(data, Tensor) and not shape):
            return shape + list(data.shape)
        if shape and isinstance(data, str):  # PyTorch reads a str first in a list as a sequence
            raise ValueError("too many dimensions 'str'")
        if not _is_seq(data):  # a tensor inside a sequence is one scalar, as in PyTorch
            return shape
        shape.append(len(data))
        if not len(data):
            return shape
        data = data[0]


def _infer(data: Any, dim: int, shape: list) -> dtype | None:
    """Promoted dtype of `data` (None if empty), checking it against `shape` from `dim` on."""
    if isinstance(data, bytes):
        raise TypeError("new(): invalid data type 'bytes'")
    d = _scalar_dtype(data)
    if d is not None:
        if isinstance(data, Tensor) and dim:  # a tensor inside a sequence is one scalar
            if data._data.size != 1:
                raise ValueError("only one element tensors can be converted to Python scalars")
            if dim < len(shape):
                raise TypeError("not a sequence")
        elif isinstance(data, (Tensor, np.ndarray)):  # its dimensions extend the shape
            if list(data.shape) != shape[dim:]:
                raise ValueError(f"expected sequence of length {shape[dim]} at dim {dim} "
                                 f"(got {data.shape[0] if data.ndim else 0})")
        elif dim < len(shape):
            raise TypeError("not a sequence")
        return d
    if not _is_seq(data):
        raise RuntimeError(f"Could not infer dtype of {type(data).__name__}")
    if dim >= len(shape):
        raise TypeError(f"'{type(data).__name__}' object cannot be interpreted as an integer")
    n = len(data)
    if shape[dim] != n:
        raise ValueError(f"expected sequence of length {shape[dim]} at dim {dim} (got {n})")
    out = None
    for item in data:
        d = _infer(item, dim + 1, shape)
        if d is not None:
            out = d if out is None else promote_types(out, d)
    return out


def check_leaves(data: Any, d: dtype, top: bool = True) -> None:
    """What PyTorch's element-by-element conversion to an explicit dtype `d` refuses: a leaf
    that is not a number, a float tensor inside a sequence or a NumPy float other than float64
    (neither is an index) for an integral dtype."""
    if isinstance(data, (str, bytes, np.ndarray)) or (isinstance(data, Tensor) and top):
        return  # the other checks word these
    if _is_seq(data):
        for item in data:
            check_leaves(item, d, False)
        return
    integral = not d.is_floating_point
    if isinstance(data, Tensor):
        if integral and (data._data.dtype.kind not in "iub" or data._data.size != 1):
            raise TypeError("only integer tensors of a single element can be converted to an "
                            "index")
        return
    if isinstance(data, (bool, int, float)):
        return  # (np.float64 is a float: PyTorch reads it as one)
    if isinstance(data, np.generic):
        if integral and isinstance(data, np.floating):
            raise TypeError(f"'numpy.{type(data).__name__}' object cannot be interpreted as an "
                            "integer")
        return
    if isinstance(data, complex):
        return
    if integral:
        raise TypeError(f"'{type(data).__name__}' object cannot be interpreted as an integer")
    raise TypeError(f"must be real number, not {type(data).__name__}")


def _unwrap(data: Any, top: bool = True) -> Any:
    """Tensors inside `data` become host arrays (nested ones: scalars), for NumPy."""
    if isinstance(data, Tensor):
        arr = _backend.to_numpy(data._data)
        return arr if top else arr.reshape(())
    if isinstance(data, (list, tuple, range)):
        return [_unwrap(d, False) for d in data]
    return data


_INT64 = np.iinfo(np.int64)
MAX_DIMS = 64  # NumPy's limit on dimensions (PyTorch's is 128): deeper nesting is refused


def _check_fits(values: Any, d: dtype, type_name: str, unpack: bool = True) -> None:
    """PyTorch's checks of Python numbers converted to an integral type, element by element:
    an int beyond int64 fails to unpack (ValueError); a value outside `d`'s range, NaN or an
    infinity cannot be converted (``c10::overflows``, RuntimeError). `unpack` False: a Scalar
    argument (``full``), where a huge int is a range error too."""
    if d.is_floating_point or d.is_complex or d is bool_:
        return  # (a complex value for a floating type: NumPy's TypeError, see creation.py)
    flat = np.asarray(values, dtype=object).reshape(-1)
    info = np.iinfo(d.np)
    for v in flat:
        if isinstance(v, complex):
            raise TypeError("'complex' object cannot be interpreted as an integer")
        if isinstance(v, (int, np.integer)) and not isinstance(v, bool):
            if unpack and d is uint64:  # PyTorch unpacks it as an unsigned 64-bit integer
                if v < 0:
                    raise OverflowError("can't convert negative int to unsigned")
                if v > info.max:
                    raise OverflowError("int too big to convert")
            elif unpack and not _INT64.min <= v <= _INT64.max:
                raise ValueError("Overflow when unpacking long long")
            # unsigned targets accept -max..max (the negative ones wrap), like c10::overflows
            bad = v > info.max or (v < info.min and (info.min != 0 or -v > info.max))
        elif unpack and d is uint64 and isinstance(v, (float, np.floating)):
            raise TypeError("an integer is required")  # no float unpacking to uint64
        elif isinstance(v, (float, np.floating)):
            bad = not np.isfinite(v) or v < info.min or v > info.max
        else:
            bad = False
        if bad:
            raise RuntimeError(f"value cannot be converted to type {type_name} without overflow")


def _python_numbers(data: Any) -> bool:
    return isinstance(data, (int, float, complex, list, tuple, range)) and \
        not isinstance(data, bool)



def _infer_all(data: Any) -> dtype:
    """PyTorch's ``infer_scalar_type``: every leaf promoted, an empty sequence the default."""
    if isinstance(data, bytes):
        raise TypeError("new(): invalid data type 'bytes'")
    d = _scalar_dtype(data)
    if d is not None:
        return d
    if not _is_seq(data):
        raise RuntimeError(f"Could not infer dtype of {type(data).__name__}")
    out = None
    for item in data:
        sub = _infer_all(item)
        out = sub if out is None else promote_types(out, sub)
    return GLOBAL.default_dtype if out is None else out


__all__: list[str] = []
