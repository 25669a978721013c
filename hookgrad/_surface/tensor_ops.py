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
from hookgrad._backend import has_data
from hookgrad._dispatch import bind
from hookgrad._dtypes import int8, int16, uint8
from hookgrad._legacy import bfloat16
from hookgrad._ops.registry import PRIMITIVES
from hookgrad._tensor import Tensor
from hookgrad.utils import dlpack

__all__ = ["select_scatter", "slice_scatter", "diagonal_scatter", "index_copy", "index_fill",
           "masked_scatter", "is_inference", "detach", "get_device"]

FALSE_PREDICATES = ["is_pinned", "is_ipu", "is_xla", "is_xpu", "is_mps", "is_mtia",
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
    return bind(*_index_copy_call(input, dim, index, source))


def _index_copy_call(input: Tensor, dim: int, index: Tensor, source: Tensor) -> tuple:
    d, index = _index_args(input, dim, index)
    if source.dtype != input.dtype:
        raise RuntimeError("index_copy_(): self and source expected to have the same dtype, but "
                           f"got (self) {input.dtype.scalar_type} and (source) "
                           f"{source.dtype.scalar_type}")
    if source.dim() and index.numel() != source.shape[d]:
        raise IndexError(f"index_copy_(): Number of indices ({index.numel()}) should be equal to "
                         f"source.size(dim) ({source.shape[d]})")
    dst = [n for k, n in enumerate(input.shape) if k != d]
    src = [n for k, n in enumerate(source.shape) if k != d]
    if source.dim() and len(dst) == len(src) and dst != src:
        k = next(k for k, (a, b) in enumerate(zip(dst, src, strict=True)) if a != b)
        raise RuntimeError("index_copy_(): Source/destination tensor must have same slice "
                           f"shapes. Destination slice shape: {dst[k]} at dimension {k} and "
                           f"source slice shape: {src[k]} at dimension {k}.")
    _check_positions(input, d, index, "index_copy_(): ", 0, source)
    return PRIMITIVES["index_copy"], (input, index, source), {"dim": d}


def _check_positions(input: Tensor, d: int, index: Tensor, prefix: str, low: int,
                     *others: Any) -> None:
    """PyTorch's bound check of index_copy (positions in ``[0, n)``) and index_fill
    (``[-n, n)``, `low` = -n's factor). Per-sample indices under vmap are checked by the
    batching rule (no value is read there); with the input batched the error is the
    RuntimeError torch.func raises, naming the physical dimension."""
    if hasattr(index, "_bt_level") or not has_data(index._data):  # meta: no values
        return
    n = input.shape[d] if input.dim() else 1
    bad = [v for v in index._data.reshape(-1).tolist() if not low * n <= int(v) < n]
    if not bad:
        return
    if any(hasattr(t, "_bt_level") for t in (input, *others)) and not low:
        raise RuntimeError(f"index {bad[0]} is out of bounds for dimension {d + 1} with size {n}")
    raise IndexError(f"{prefix}index {bad[0]} is out of bounds for dimension {d} with size {n}")


def index_fill(input: Tensor, dim: int, index: Tensor, value: Any) -> Tensor:
    """Copy of `input` filled with `value` at `index` along `dim`. Mirrors: ``torch.index_fill``."""
    return bind(*_index_fill_call(input, dim, index, value))


def _index_fill_call(input: Tensor, dim: int, index: Tensor, value: Any) -> tuple:
    d, index = _index_args(input, dim, index)
    _check_positions(input, d, index, "", -1)
    if isinstance(value, Tensor):
        if value.dim() != 0:
            raise RuntimeError("index_fill_ only supports a 0-dimensional value tensor, but got "
                               f"tensor with {value.dim()} dimension(s).")
        return PRIMITIVES["index_fill_tensor"], (input, index, value), {"dim": d}
    from hookgrad._dtypes import check_scalar_fits
    check_scalar_fits(value, input._data.dtype)
    return PRIMITIVES["index_fill"], (input, index), {"dim": d, "value": value}


def _index_args(input: Tensor, dim: int, index: Tensor) -> tuple:
    from hookgrad._ops import select_scan  # noqa: F401  (registers the primitives)
    from hookgrad._ops._shapes import normalize_dim

    if index.dim() > 1 or index.dtype.scalar_type != "Long":
        raise IndexError("index_fill_(): Expected dtype int64 for index.")
    return normalize_dim(dim, input.dim()), index.reshape(-1)


def masked_scatter(input: Tensor, mask: Tensor, source: Tensor) -> Tensor:
    """Copy of `input` with the True positions of `mask` taking `source`'s values in order.

    Mirrors: ``torch.masked_scatter``.
    """
    if input.dtype != source.dtype:
        raise RuntimeError("masked_scatter: expected self and source to have same dtypes but "
                           f"got{input.dtype.scalar_type} and {source.dtype.scalar_type}")
    if mask.dtype.scalar_type != "Bool":
        raise RuntimeError("masked_scatter_ only supports boolean masks, but got mask with "
                           f"dtype {mask.dtype.scalar_type}")
    if not has_data(input._data) and has_data(mask._data):
        mask = mask.to(input.device)  # PyTorch's meta kernel takes a mask of another device
    if any(hasattr(t, "_bt_level") for t in (mask, source)) or not has_data(mask._data):
        # per-sample masks: the batching rule checks; meta: no values to count
        return bind(PRIMITIVES["masked_scatter"], (input, mask, source), {})
    full = mask.expand(input.shape) if tuple(mask.shape) != tuple(input.shape) else mask
    count = int(full._data.sum())
    if count > source.numel():
        raise RuntimeError("Number of elements of source < number of ones in mask")
    return bind(PRIMITIVES["masked_scatter"], (input, mask, source), {})


def _masked_scatter_(self: Tensor, mask: Tensor, source: Tensor) -> Tensor:
    """Mirrors: ``torch.Tensor.masked_scatter_`` (its own node, MaskedScatterBackward0)."""
    from hookgrad._dispatch import bind_inplace

    masked_scatter(Tensor._make(self._data), mask, source)  # its checks (the value is dropped)
    return bind_inplace(PRIMITIVES["masked_scatter"], self, (self, mask, source), {})


def _tri_inplace(name: str) -> Any:
    def method(self: Tensor, diagonal: int = 0) -> Tensor:
        from hookgrad._dispatch import bind_inplace

        if self.dim() < 2:
            raise RuntimeError(f"{name}: input tensor must have at least 2 dimensions")
        return bind_inplace(PRIMITIVES[name], self, (self,), {"diagonal": diagonal})
    method.__name__ = name + "_"
    method.__doc__ = f"Mirrors: ``torch.Tensor.{name}_`` (its own node, as ``{name}``)."
    return method


def _index_inplace(call: Any, name: str) -> Any:
    """The in-place form of index_copy/index_fill: the op's own node, written into `self`."""
    def method(self: Tensor, *args: Any, **kwargs: Any) -> Tensor:
        from hookgrad._dispatch import bind_inplace

        prim, inputs, params = call(self, *args, **kwargs)
        return bind_inplace(prim, self, inputs, params)
    method.__name__ = name
    method.__doc__ = f"In-place form. Mirrors: ``torch.Tensor.{name}``."
    return method


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
        "index_copy_": _index_inplace(_index_copy_call, "index_copy_"),
        "index_fill_": _index_inplace(_index_fill_call, "index_fill_"),
        "masked_scatter_": _masked_scatter_,
        "tril_": _tri_inplace("tril"), "triu_": _tri_inplace("triu"),
        "logical_not_": _inplace(_logical_not, "logical_not_"),
        "name": None, "volatile": False,
        "__dlpack__": dlpack.tensor_dlpack, "__dlpack_device__": dlpack.tensor_dlpack_device,
    }
    for op in ("eq", "ne", "lt", "le", "gt", "ge", "greater", "greater_equal", "less",
               "less_equal", "not_equal", "logical_and", "logical_or", "logical_xor",
               "bitwise_not", "float_power"):
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
