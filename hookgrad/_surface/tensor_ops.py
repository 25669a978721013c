"""Tensor methods and functions of PyTorch's surface built on existing ops: ``as_subclass``,
the legacy ``new``, dtype shorthands, scatter-into-copy ops, ``index_copy``/``index_fill``,
``masked_scatter`` and predicates that are constant on a CPU, dense, real tensor.

Mirrors: ``torch.Tensor`` methods and ``torch`` functions of the same names.
"""

from __future__ import annotations

from typing import Any

import numpy as np

import hookgrad._functional.creation as C
import hookgrad._functional.pointwise as P
from hookgrad._functional.complex import IMAG_PROPERTY, REAL_PROPERTY
from hookgrad._dispatch import bind
from hookgrad._ops._batching import guard_index
from hookgrad._dtypes import int8, int16, uint8
from hookgrad._legacy import bfloat16
from hookgrad._ops.registry import PRIMITIVES
from hookgrad._tensor import Tensor
from hookgrad.utils import dlpack

__all__ = ["select_scatter", "slice_scatter", "diagonal_scatter", "index_copy", "index_fill",
           "masked_scatter", "is_inference", "detach", "get_device"]

FALSE_PREDICATES = ["is_pinned", "is_shared", "is_ipu", "is_xla", "is_xpu", "is_mps", "is_mtia",
                    "is_maia", "is_vulkan", "is_distributed", "is_inference"]


def as_subclass(self: Tensor, cls: type) -> Tensor:
    """An alias of `self` (``AliasBackward0``) whose class is `cls`. Mirrors: ``torch.Tensor.as_subclass``."""
    if not (isinstance(cls, type) and issubclass(cls, Tensor)):
        raise TypeError("as_subclass(): argument 'cls' must be a subclass of torch.Tensor")
    out = bind(PRIMITIVES["alias"], (self,), {})
    out.__class__ = cls
    return out


def new(self: Tensor, *args: Any, **kwargs: Any) -> Tensor:
    """Legacy constructor with `self`'s dtype: sizes, a sequence of values, or nothing.

    Mirrors: ``torch.Tensor.new``.
    """
    dtype = kwargs.pop("dtype", self.dtype)
    if not args:
        return C.empty(0, dtype=dtype)
    if len(args) == 1 and isinstance(args[0], Tensor):
        return args[0].to(dtype)
    if all(isinstance(a, (int, np.integer)) for a in args) or (
            len(args) == 1 and isinstance(args[0], tuple) and type(args[0]).__name__ == "Size"):
        return C.empty(*args, dtype=dtype)
    return C.tensor(args[0], dtype=dtype)


def _to(dtype: Any, name: str) -> Any:
    def method(self: Tensor, memory_format: Any = None) -> Tensor:
        return self.to(dtype)
    method.__name__ = name
    method.__doc__ = f"``self.to({dtype})``. Mirrors: ``torch.Tensor.{name}``."
    return method


byte, char, short, bfloat16_ = (_to(uint8, "byte"), _to(int8, "char"), _to(int16, "short"),
                                _to(bfloat16, "bfloat16"))


def _false(self: Tensor, *args: Any) -> bool:
    return False


def is_inference(input: Tensor) -> bool:
    """Mirrors: ``torch.is_inference`` (hookgrad records no inference tensors)."""
    return bool(getattr(input, "_is_inference", False))


def detach(input: Tensor) -> Tensor:
    """Mirrors: ``torch.detach``."""
    return input.detach()


def get_device(input: Tensor) -> int:
    """-1 for CPU tensors. Mirrors: ``torch.get_device``."""
    return input.get_device()


def select_scatter(input: Tensor, src: Tensor, dim: int, index: int) -> Tensor:
    """A copy of `input` with ``select(dim, index)`` replaced by `src`. Mirrors: ``torch.select_scatter``."""
    out = input.clone()
    out.select(dim, index).copy_(src)
    return out


def slice_scatter(input: Tensor, src: Tensor, dim: int = 0, start: Any = None, end: Any = None,
                  step: int = 1) -> Tensor:
    """A copy of `input` with a slice along `dim` replaced by `src`. Mirrors: ``torch.slice_scatter``."""
    out = input.clone()
    idx = [slice(None)] * input.dim()
    idx[dim] = slice(start, end, step)
    out[tuple(idx)] = src
    return out


def diagonal_scatter(input: Tensor, src: Tensor, offset: int = 0, dim1: int = 0,
                     dim2: int = 1) -> Tensor:
    """A copy of `input` with a diagonal replaced by `src`. Mirrors: ``torch.diagonal_scatter``."""
    out = input.clone()
    out.diagonal(offset, dim1, dim2).copy_(src)
    return out


def index_copy(input: Tensor, dim: int, index: Tensor, source: Tensor) -> Tensor:
    """Copy of `input` whose slices at `index` along `dim` are `source`'s. Mirrors: ``torch.index_copy``."""
    out = input.clone()
    idx: list = [slice(None)] * input.dim()
    n = input.shape[dim] if input.dim() else 1
    if hasattr(index, "_bt_level"):
        # per-sample indices under vmap: no value is read; one outside [0, n) (negative ones
        # included: setitem would wrap them) becomes n, and the write's IndexError is
        # PyTorch's vmap RuntimeError
        idx[dim] = guard_index(index, n)
        try:
            out[tuple(idx)] = source
        except IndexError as exc:
            raise RuntimeError(str(exc)) from None
        return out
    bad = [int(v) for v in index.reshape(-1).tolist() if not 0 <= int(v) < n]
    if bad:
        raise IndexError(f"index_copy_(): index {bad[0]} is out of bounds for dimension {dim} "
                         f"with size {n}")
    idx[dim] = index
    out[tuple(idx)] = source
    return out


def index_fill(input: Tensor, dim: int, index: Tensor, value: Any) -> Tensor:
    """Copy of `input` filled with `value` at `index` along `dim`. Mirrors: ``torch.index_fill``."""
    out = input.clone()
    idx: list = [slice(None)] * input.dim()
    idx[dim] = index
    out[tuple(idx)] = value
    return out


def masked_scatter(input: Tensor, mask: Tensor, source: Tensor) -> Tensor:
    """Copy of `input` with the True positions of `mask` taking `source`'s values in order.

    Mirrors: ``torch.masked_scatter``.
    """
    full = mask.expand(input.shape) if tuple(mask.shape) != tuple(input.shape) else mask
    count = int(full._data.sum())
    if count > source.numel():
        raise RuntimeError("masked_scatter: expected source to have at least as many elements "
                           "as ones in mask")
    out = input.clone()
    out[full] = source.reshape(-1)[:count]
    return out


def _inplace(fn: Any, name: str) -> Any:
    def method(self: Tensor, *args: Any, **kwargs: Any) -> Tensor:
        return self.copy_(fn(self, *args, **kwargs))
    method.__name__ = name
    method.__doc__ = f"In-place form. Mirrors: ``torch.Tensor.{name}``."
    return method


def _logical_not(self: Tensor) -> Tensor:
    return P.logical_not(self)


def install() -> None:
    """Attach the methods to `Tensor` (names it already has are left alone)."""
    methods: dict[str, Any] = {
        "as_subclass": as_subclass, "new": new, "byte": byte, "char": char, "short": short,
        "bfloat16": bfloat16_, "real": REAL_PROPERTY, "imag": IMAG_PROPERTY,
        "select_scatter": select_scatter, "slice_scatter": slice_scatter,
        "diagonal_scatter": diagonal_scatter, "index_copy": index_copy,
        "index_fill": index_fill, "masked_scatter": masked_scatter,
        "index_copy_": _inplace(index_copy, "index_copy_"),
        "index_fill_": _inplace(index_fill, "index_fill_"),
        "masked_scatter_": _inplace(masked_scatter, "masked_scatter_"),
        "logical_not_": _inplace(_logical_not, "logical_not_"),
        "name": None, "volatile": False,
        "__dlpack__": dlpack.tensor_dlpack, "__dlpack_device__": dlpack.tensor_dlpack_device,
    }
    for op in ("eq", "ne", "lt", "le", "gt", "ge", "greater", "greater_equal", "less",
               "less_equal", "not_equal", "logical_and", "logical_or", "logical_xor", "tril",
               "triu", "bitwise_not", "float_power"):
        fn = getattr(Tensor, op, None)
        if fn is not None:
            methods[op + "_"] = _inplace(fn, op + "_")
    for name in FALSE_PREDICATES:
        methods[name] = _false
    for name, value in methods.items():
        if name not in Tensor.__dict__:
            setattr(Tensor, name, value)
    from hookgrad._surface import tensor_more

    tensor_more.install()


def _function_of(method: str) -> Any:
    def fn(input: Tensor, *args: Any, **kwargs: Any) -> Any:
        return getattr(input, method)(*args, **kwargs)
    fn.__name__ = method
    fn.__doc__ = f"``input.{method}(...)``. Mirrors: ``torch.{method}``."
    return fn


FUNCTIONS_OF_METHODS = {name: _function_of(name) for name in (
    "arccos_", "arccosh_", "arcsin_", "arcsinh_", "arctan_", "arctanh_", "clip_", "logit_",
    "index_put_", "detach_")}
