"""Integer and element-layout functions: bit shifts, ``frexp``, ``unique_consecutive``,
``nonzero_static``.

Mirrors: ``torch.bitwise_left_shift``/``bitwise_right_shift`` (and ``<<``/``>>``), ``torch.frexp``,
``torch.unique_consecutive``, ``torch.nonzero_static`` and their Tensor methods.
"""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np

import hookgrad._functional.creation as C
from hookgrad._dtypes import check_kernel
from hookgrad import return_types as _return_types
from hookgrad._dispatch import bind
from hookgrad._functional._common import result_type
from hookgrad._ops import frexp_unique as _fu  # noqa: F401  (registers frexp, unique_consecutive)
from hookgrad._ops._shapes import normalize_dim
from hookgrad._ops.registry import PRIMITIVES as P
from hookgrad._surface.install import _type_name
from hookgrad._tensor import Tensor

__all__ = ["bitwise_left_shift", "bitwise_right_shift", "frexp", "unique_consecutive",
           "nonzero_static"]

RETURN_TYPES = {"frexp": _return_types._make("frexp", ("mantissa", "exponent"))}


def _operands(input: Any, other: Any) -> tuple[Tensor, Tensor]:
    a = input if isinstance(input, Tensor) else None
    b = other if isinstance(other, Tensor) else None
    dt = result_type(input, other)
    a = C.tensor(input, dtype=dt) if a is None else a
    b = C.tensor(other, dtype=dt) if b is None else b
    return a.to(dt), b.to(dt)


def _shift(input: Any, other: Any, left: bool) -> Tensor:
    a, b = _operands(input, other)
    x, s = np.asarray(a.numpy()), np.asarray(b.numpy())
    check_kernel("lshift" if left else "rshift", x.dtype)
    if x.dtype.kind not in "iub":
        raise NotImplementedError(f'"{"lshift" if left else "rshift"}_cpu" not implemented for '
                                  f"'{_type_name(a.dtype)}'")
    bits = x.dtype.itemsize * 8
    big = (s < 0) | (s >= bits)  # PyTorch defines shifts past the width (C leaves them undefined)
    safe = np.where(big, 0, s).astype(x.dtype)
    with np.errstate(over="ignore"):
        if left:
            res = np.where(big, 0, np.left_shift(x, safe))
        else:
            res = np.where(big, np.where(x < 0, -1, 0) if x.dtype.kind == "i" else 0,
                           np.right_shift(x, safe))
    return C.tensor(np.asarray(res).astype(x.dtype))


def bitwise_left_shift(input: Any, other: Any, *, out: Any = None) -> Tensor:
    """``input << other`` (0 once the shift reaches the width). Mirrors: ``torch.bitwise_left_shift``."""
    return _out(_shift(input, other, True), out)


def bitwise_right_shift(input: Any, other: Any, *, out: Any = None) -> Tensor:
    """Arithmetic ``input >> other``. Mirrors: ``torch.bitwise_right_shift``."""
    return _out(_shift(input, other, False), out)


def _out(res: Tensor, out: Any) -> Tensor:
    return res if out is None else out.copy_(res)


def _inplace(left: bool) -> Any:
    def method(self: Tensor, other: Any) -> Tensor:
        res = _shift(self, other, left)
        if res.dtype != self.dtype:
            raise RuntimeError(f"result type {_type_name(res.dtype)} can't be cast to the desired "
                               f"output type {_type_name(self.dtype)}")
        return self.copy_(res)
    method.__name__ = "bitwise_left_shift_" if left else "bitwise_right_shift_"
    method.__doc__ = f"Mirrors: ``torch.Tensor.{method.__name__}``."
    return method


def frexp(input: Tensor, *, out: Any = None) -> Any:
    """Mantissa in [0.5, 1) and int32 exponent. Mirrors: ``torch.frexp``."""
    if input._data.dtype.kind != "f":
        raise RuntimeError("torch.frexp() only supports floating-point dtypes")
    m, e = bind(P["frexp"], (input,), {})
    return RETURN_TYPES["frexp"]((m, e))


def unique_consecutive(input: Tensor, return_inverse: bool = False, return_counts: bool = False,
                       dim: int | None = None) -> Any:
    """Collapse runs of equal consecutive elements (or slices along `dim`).

    Mirrors: ``torch.unique_consecutive``."""
    check_kernel("unique", input._data.dtype)
    d = None if dim is None else normalize_dim(int(dim), input.dim())
    values, inverse, counts = bind(P["unique_consecutive"], (input,), {"dim": d})
    out = [values] + ([inverse] if return_inverse else []) + ([counts] if return_counts else [])
    return out[0] if len(out) == 1 else tuple(out)


def nonzero_static(input: Tensor, *, size: int, fill_value: int = -1) -> Tensor:
    """``nonzero`` padded with `fill_value` or cut to `size` rows. Mirrors: ``torch.nonzero_static``."""
    if not isinstance(size, (int, np.integer)) or size < 0:
        raise RuntimeError("nonzero_static: 'size' must be an non-negative integer")
    arr = np.asarray(input.detach().numpy())
    idx = np.argwhere(arr).astype(np.int64)[:size]
    pad = np.full((size - len(idx), arr.ndim), fill_value, dtype=np.int64)
    return C.tensor(np.concatenate([idx, pad]).reshape(size, arr.ndim))


def _operator(fn: Any) -> Any:
    """A shift operator: NotImplemented for an operand that is neither a tensor nor a number
    (Python then raises its TypeError, as for PyTorch's operators)."""
    def method(self: Tensor, other: Any) -> Any:
        if not isinstance(other, (Tensor, numbers.Number)):
            return NotImplemented
        return fn(self, other)
    method.__name__ = fn.__name__
    return method


METHODS = {
    "bitwise_left_shift": bitwise_left_shift, "bitwise_right_shift": bitwise_right_shift,
    "bitwise_left_shift_": _inplace(True), "bitwise_right_shift_": _inplace(False),
    "__lshift__": _operator(bitwise_left_shift), "__rshift__": _operator(bitwise_right_shift),
    "__rlshift__": _operator(lambda self, other: bitwise_left_shift(other, self)),
    "__rrshift__": _operator(lambda self, other: bitwise_right_shift(other, self)),
    "__ilshift__": _operator(_inplace(True)), "__irshift__": _operator(_inplace(False)),
    "frexp": frexp, "unique_consecutive": unique_consecutive, "nonzero_static": nonzero_static,
}
