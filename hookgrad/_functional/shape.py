"""View, reshape, join and copy ops. Mirrors the ``torch`` functions of the same names.

Slicing views live in `_slicing`, flips/rolls/pads in `rearrange`, the view helpers (and NOTE
[View creation meta]) in `_views`; this module re-exports them all.
"""

from __future__ import annotations

import operator
import warnings
from typing import Any

from hookgrad import _backend
from hookgrad._ops._checks import tensor_arguments
from hookgrad._config import STATE
from hookgrad._dispatch import bind, bind_inplace
from hookgrad._dtypes import dtype as _dtype_cls
from hookgrad._dtypes import to_dtype
from hookgrad._functional._to_args import check_one_dtype, check_to_kwargs, parse_device
from hookgrad._functional._view_dtype import view_dtype
from hookgrad._memory_format import check_rank, format_name, is_contiguous_as, suggest
from hookgrad._functional._common import to_tensor_like
from hookgrad._functional._slicing import (  # noqa: F401 - re-exported
    as_strided,
    chunk,
    diagonal,
    narrow,
    select,
    slice_dim,
    split,
    split_method,
    storage_offset_of,
    tensor_split,
    unbind,
)
from hookgrad._functional._views import (  # noqa: F401
    UNSET, _dim, _infer, _multi_view, _size_args, _view, one_spelling)
from hookgrad._functional.rearrange import *  # noqa: F403 - re-exported public ops
from hookgrad._functional.rearrange import METHODS as _REARRANGE_METHODS
from hookgrad._functional.rearrange import __all__ as _rearrange_all
from hookgrad._ops import shape as _S
from hookgrad._ops._checks import check_tensor, not_tensor
from hookgrad._ops._shapes import check_broadcast, infer_size, normalize_dim
from hookgrad._ops.registry import PRIMITIVES as P
from hookgrad._tensor import Tensor

__all__ = [
    "reshape",
    "clone",
    "unsqueeze",
    "squeeze",
    "as_strided",
    "transpose",
    "swapaxes",
    "swapdims",
    "permute",
    "t",
    "flatten",
    "unflatten",
    "ravel",
    "narrow",
    "select",
    "unbind",
    "split",
    "chunk",
    "tensor_split",
    "movedim",
    "moveaxis",
    "cat",
    "concat",
    "concatenate",
    "stack",
    "hstack",
    "vstack",
    "diagonal",
    "broadcast_to",
    "atleast_1d",
    "atleast_2d",
] + list(_rearrange_all)


# ---------------------------------------------------------------------------- reshaping
def view(self: Tensor, *size: Any, **kw: Any) -> Tensor:
    """Mirrors: ``torch.Tensor.view`` (a shape, or a dtype: `_view_dtype`)."""
    if kw:  # view(dtype=...) / view(size=...): PyTorch's keyword spellings
        if size or len(kw) != 1 or not ({"dtype", "size"} & set(kw)):
            raise TypeError(f"view() received an invalid combination of arguments - got "
                            f"{tuple(type(a).__name__ for a in size)}, keywords {sorted(kw)}")
        size = (kw.get("dtype", kw.get("size")),)
    if len(size) == 1 and isinstance(size[0], _dtype_cls):
        return view_dtype(self, size[0])
    shape = _infer(_size_args(size), self._data.size)
    return _view(P["view"], self, {"size": shape})


def _viewable(arr: Any, shape: tuple) -> bool:
    probe = arr.view()
    try:
        probe.shape = shape
    except AttributeError:
        return False
    return True


def reshape(input: Tensor, *sizes: Any, shape: Any = UNSET) -> Tensor:
    """A view when the memory layout allows it, else a copy. Mirrors: ``torch.reshape``.

    The copy path is ``_unsafe_view(clone(input))``, as PyTorch's (``UnsafeViewBackward0``).
    """
    size = _infer(_size_args(one_spelling(sizes, shape, "reshape")), input._data.size)
    if _viewable(input._data, size):
        # PyTorch views a contiguous input, and aliases a non-contiguous one it can view
        data = input._data
        prim = P["view"] if not hasattr(data, "flags") or data.flags.c_contiguous \
            else P["_reshape_alias"]
        return _view(prim, input, {"size": size})
    copy = bind(P["clone"], (input,), {"memory_format": "contiguous_format"})
    return bind(P["_unsafe_view"], (copy,), {"size": size})


def flatten(input: Tensor, start_dim: int = 0, end_dim: int = -1) -> Tensor:
    """Mirrors: ``torch.flatten`` (returns `input` itself when nothing is merged)."""
    try:
        shape = input._data.shape
    except AttributeError:
        raise not_tensor("flatten", input) from None
    if not shape:  # a 0-d tensor has the dims of a 1-d one here ([-1, 0])
        for d in (start_dim, end_dim):
            if not -1 <= d <= 0:
                raise IndexError("Dimension out of range (expected to be in range of [-1, 0], "
                                 f"but got {d})")
        return reshape(input, 1)
    start, end = _dim(start_dim, input), _dim(end_dim, input)
    if start > end:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    if start == end:
        return input
    merged = 1
    for s in shape[start : end + 1]:
        merged *= s
    return reshape(input, shape[:start] + (merged,) + shape[end + 1 :])


def unflatten(input: Tensor, dim: int, sizes: Any) -> Tensor:
    """Mirrors: ``torch.unflatten`` (a view; one size may be -1)."""
    d = _dim(dim, input)
    shape = input._data.shape
    inner = infer_size(tuple(sizes), shape[d])
    return view(input, shape[:d] + inner + shape[d + 1 :])


def ravel(input: Tensor) -> Tensor:
    """Mirrors: ``torch.ravel``."""
    return view(contiguous(input), -1)


def expand(self: Tensor, *sizes: Any, size: Any = UNSET) -> Tensor:
    """Mirrors: ``torch.Tensor.expand`` (-1 keeps a dim)."""
    sizes = _size_args(one_spelling(sizes, size, "expand"))
    shape = self._data.shape
    if len(sizes) < len(shape):
        raise RuntimeError(
            f"expand(torch.{self.dtype.legacy_name}{{{list(shape)}}}, size={list(sizes)}): the "
            f"number of sizes provided ({len(sizes)}) must be greater or equal to the number of "
            f"dimensions in the tensor ({len(shape)})"
        )
    lead = len(sizes) - len(shape)
    out = []
    for i, s in enumerate(sizes):
        if i >= lead:
            cur = shape[i - lead]
            if s == -1:
                s = cur
            elif cur != 1 and cur != s:
                raise RuntimeError(
                    f"The expanded size of the tensor ({s}) must match the existing size ({cur}) "
                    f"at non-singleton dimension {i}.  Target sizes: {list(sizes)}.  Tensor "
                    f"sizes: {list(shape)}"
                )
        elif s < 0:
            raise RuntimeError(
                f"The expanded size of the tensor ({s}) isn't allowed in a leading, "
                "non-existing dimension 0"
            )
        out.append(s)
    return _view(P["expand"], self, {"size": tuple(out)})


def broadcast_to(input: Tensor, size: Any) -> Tensor:
    """Mirrors: ``torch.broadcast_to``."""
    return expand(input, *tuple(size))


@tensor_arguments
def expand_as(self: Tensor, other: Tensor) -> Tensor:
    """Mirrors: ``torch.Tensor.expand_as``."""
    return expand(self, *other._data.shape)


def sum_to_size(self: Tensor, *size: Any) -> Tensor:
    """Mirrors: ``torch.Tensor.sum_to_size``."""
    size = _size_args(size)
    if tuple(size) == self._data.shape:
        return self
    return bind(P["sum_to_size"], (self,), {"size": tuple(size)})


def unsqueeze(input: Tensor, dim: int) -> Tensor:
    """Mirrors: ``torch.unsqueeze``."""
    if not isinstance(dim, int):
        try:
            dim = operator.index(dim)
        except TypeError:
            raise TypeError("unsqueeze(): argument 'dim' (position 1) must be int, not "
                            f"{type(dim).__name__}") from None
    d = normalize_dim(int(dim), input._data.ndim + 1)
    return _view(P["unsqueeze"], input, {"dim": d})


_EVERY_DIM: Any = object()  # squeeze() without `dim` (an explicit None is PyTorch's TypeError)


def squeeze(input: Tensor, dim: Any = _EVERY_DIM) -> Tensor:
    """Mirrors: ``torch.squeeze`` (``SqueezeBackward0/1/2`` for no dim / an int / a tuple)."""
    check_tensor(input, "squeeze")
    if dim is _EVERY_DIM:
        return _view(P["squeeze"], input, {})
    if dim is None:
        raise TypeError("squeeze() received an invalid combination of arguments - got "
                        "(Tensor, NoneType), but expected one of:\n * (Tensor input)\n * (Tensor "
                        "input, int dim)\n * (Tensor input, tuple of ints dim)")
    if isinstance(dim, (tuple, list)):
        dims = tuple(_dim(d, input) for d in dim)
        return _view(P["squeeze_dims"], input, {"dim": dims})
    return _view(P["squeeze_dim"], input, {"dim": _dim(dim, input)})


def atleast_1d(*tensors: Any) -> Any:
    """Mirrors: ``torch.atleast_1d``."""
    ts = tensors[0] if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)) else tensors
    out = tuple(reshape(t, 1) if t._data.ndim == 0 else t for t in ts)
    return out[0] if len(tensors) == 1 and isinstance(tensors[0], Tensor) else out


def atleast_2d(*tensors: Any) -> Any:
    """Mirrors: ``torch.atleast_2d``."""
    ts = tensors[0] if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)) else tensors
    out = tuple(
        reshape(t, 1, 1) if t._data.ndim == 0 else unsqueeze(t, 0) if t._data.ndim == 1 else t
        for t in ts
    )
    return out[0] if len(tensors) == 1 and isinstance(tensors[0], Tensor) else out


# ---------------------------------------------------------------------------- dim order
def transpose(input: Tensor, dim0: int, dim1: int) -> Tensor:
    """Mirrors: ``torch.transpose``."""
    return _view(P["transpose"], input, {"dim0": _dim(dim0, input), "dim1": _dim(dim1, input)})


@tensor_arguments
def t(input: Tensor) -> Tensor:
    """Mirrors: ``torch.t`` (tensors with at most 2 dims)."""
    if input._data.ndim > 2:
        raise RuntimeError(
            f"t() expects a tensor with <= 2 dimensions, but self is {input._data.ndim}D"
        )
    return _view(P["t"], input, {})


def permute(input: Tensor, *order: Any, dims: Any = UNSET) -> Tensor:
    """Mirrors: ``torch.permute``."""
    dims = _size_args(one_spelling(order, dims, "permute"))
    n = input._data.ndim
    if len(dims) != n:
        raise RuntimeError(
            "permute(sparse_coo): number of dimensions in the tensor input does not match the "
            f"length of the desired ordering of dimensions i.e. input.dim() = {n} is not equal "
            f"to len(dims) = {len(dims)}"
        )
    norm = tuple(normalize_dim(d, n) for d in dims)
    if len(set(norm)) != n:
        raise RuntimeError("permute(): duplicate dims are not allowed.")
    return _view(P["permute"], input, {"dims": norm})


def movedim(input: Tensor, source: Any, destination: Any) -> Tensor:
    """Mirrors: ``torch.movedim`` (always a ``PermuteBackward0`` view)."""
    n = input._data.ndim
    if isinstance(source, int) != isinstance(destination, int):
        raise TypeError(
            "movedim() received an invalid combination of arguments - got (Tensor, "
            f"{type(source).__name__}, {type(destination).__name__})"
        )
    src = (source,) if isinstance(source, int) else tuple(source)
    dst = (destination,) if isinstance(destination, int) else tuple(destination)
    if len(src) != len(dst):
        raise RuntimeError(
            "movedim: Invalid source or destination dims: source "
            f"({list(src)} dims) should contain the same number of dims as destination "
            f"({list(dst)} dims)"
        )
    given = {"source": list(src), "destination": list(dst)}
    src = tuple(normalize_dim(d, n) for d in src)
    dst = tuple(normalize_dim(d, n) for d in dst)
    for name, dims in (("source", src), ("destination", dst)):
        if len(set(dims)) != len(dims):
            raise RuntimeError(f"movedim: repeated dim in `{name}` ({given[name]})")
    order = [-1] * n
    for s, d in zip(src, dst, strict=False):
        order[d] = s
    rest = iter(d for d in range(n) if d not in src)
    order = [o if o != -1 else next(rest) for o in order]
    return _view(P["permute"], input, {"dims": tuple(order)})


def _prop_T(self: Tensor) -> Tensor:
    n = self._data.ndim
    if n == 0:
        warnings.warn(
            "Tensor.T is deprecated on 0-D tensors. This function is the identity in these cases.",
            UserWarning,
            stacklevel=2,
        )
    elif n != 2:
        warnings.warn(
            "The use of `x.T` on tensors of dimension other than 2 to reverse their shape is "
            "deprecated and it will throw an error in a future release. Consider `x.mT` to "
            "transpose batches of matrices or `x.permute(*torch.arange(x.ndim - 1, -1, -1))` to "
            "reverse the dimensions of a tensor.",
            UserWarning,
            stacklevel=2,
        )
    return _view(P["permute"], self, {"dims": tuple(range(n - 1, -1, -1))})


def _prop_mT(self: Tensor) -> Tensor:
    if self._data.ndim < 2:
        raise RuntimeError(
            "tensor.mT is only supported on matrices or batches of matrices. "
            f"Got {self._data.ndim}-D tensor."
        )
    return transpose(self, -2, -1)


def _prop_H(self: Tensor) -> Tensor:
    if self._data.ndim != 2:
        raise RuntimeError(
            f"tensor.H is only supported on matrices (2-D tensors). Got {self._data.ndim}-D tensor."
        )
    return transpose(self, 0, 1)


def _prop_mH(self: Tensor) -> Tensor:
    if self._data.ndim < 2:
        raise RuntimeError(
            "tensor.mH is only supported on matrices or batches of matrices. "
            f"Got {self._data.ndim}-D tensor."
        )
    return transpose(self, -2, -1)


# ---------------------------------------------------------------------------- joining
def _join_args(tensors: Any, name: str) -> list:
    if isinstance(tensors, Tensor) or not isinstance(tensors, (list, tuple)):
        raise TypeError(
            f"{name}(): argument 'tensors' (position 1) must be tuple of Tensors, "
            f"not {type(tensors).__name__}"
        )
    for i, t in enumerate(tensors):
        if not isinstance(t, Tensor):
            raise TypeError(f"expected Tensor as element {i} in argument 0, but got "
                            f"{type(t).__name__}")
    return list(tensors)


def cat(tensors: Any, dim: int = 0, *, out: Any = None) -> Tensor:
    """Mirrors: ``torch.cat`` (type promotion; legacy 1-D empty inputs are skipped; ``out=``
    is resized to the result and written)."""
    if out is not None and not isinstance(out, Tensor):
        raise TypeError(f"cat(): argument 'out' must be Tensor, not {type(out).__name__}")
    ts = _join_args(tensors, "cat")
    if not ts:
        raise ValueError("torch.cat(): expected a non-empty list of Tensors")
    skip = _S.legacy_empty(ts)
    ref = next(t for t, s in zip(ts, skip, strict=False) if not s)
    for i, t in enumerate(ts):  # checked before the dim, as PyTorch does
        if t._data.ndim == 0:
            raise RuntimeError(f"zero-dimensional tensor (at position {i}) cannot be concatenated")
    d = _dim(dim, ref)
    for i, (x, s) in enumerate(zip(ts, skip, strict=False)):
        if s:
            continue
        if x._data.ndim != ref._data.ndim:
            raise RuntimeError(
                "Tensors must have same number of dimensions: got "
                f"{ref._data.ndim} and {x._data.ndim}"
            )
        for k, (a, b) in enumerate(zip(ref._data.shape, x._data.shape, strict=False)):
            if k != d and a != b:
                raise RuntimeError(
                    f"Sizes of tensors must match except in dimension {d}. Expected size {a} but "
                    f"got size {b} for tensor number {i} in the list."
                )
    result = _S.cat_tensors(ts, d, _promoted(ts))
    if out is None:
        return result
    from hookgrad._functional._out import joined_out  # (_out is above this module)
    return joined_out("cat", ts, result, out)


def _promoted(ts: list) -> Any:
    from hookgrad._functional._common import result_type

    first = ts[0]._data.dtype
    if all(t._data.dtype == first for t in ts):
        return None
    return result_type(*[_as_dim_tensor(t) for t in ts])


def _as_dim_tensor(t: Tensor) -> Tensor:
    # cat/stack promote like tensors with dims, whatever each input's rank.
    return t if t._data.ndim else reshape(t.detach(), 1)


def stack(tensors: Any, dim: int = 0, *, out: Any = None) -> Tensor:
    """Mirrors: ``torch.stack``."""
    ts = _join_args(tensors, "stack")
    if not ts:
        raise RuntimeError("stack expects a non-empty TensorList")
    shape = ts[0]._data.shape
    for i, x in enumerate(ts):
        if x._data.shape != shape:
            raise RuntimeError(
                f"stack expects each tensor to be equal size, but got {list(shape)} at entry 0 "
                f"and {list(x._data.shape)} at entry {i}"
            )
    d = normalize_dim(int(dim), len(shape) + 1)
    result = _S.stack_tensors(ts, d, _promoted(ts))
    if out is None:
        return result
    from hookgrad._functional._out import joined_out  # (_out is above this module)
    return joined_out("stack", ts, result, out)


def hstack(tensors: Any) -> Tensor:
    """Mirrors: ``torch.hstack``."""
    ts = atleast_1d(tuple(_join_args(tensors, "hstack")))
    return cat(ts, 0 if ts[0]._data.ndim == 1 else 1)


def vstack(tensors: Any) -> Tensor:
    """Mirrors: ``torch.vstack``."""
    return cat(atleast_2d(tuple(_join_args(tensors, "vstack"))), 0)


# ---------------------------------------------------------------------------- copies
def clone(input: Tensor, *, memory_format: Any = None) -> Tensor:
    """Mirrors: ``torch.clone`` (keeps a dense layout, as ``preserve_format`` does)."""
    check_tensor(input, "clone")
    return bind(P["clone"], (input,), {"memory_format": memory_format})


def contiguous(self: Tensor, memory_format: Any = None) -> Tensor:
    """Mirrors: ``torch.Tensor.contiguous`` (returns self when already in `memory_format`)."""
    name = "contiguous_format" if memory_format is None else format_name(memory_format)
    check_rank(name, self._data.ndim)
    if is_contiguous_as(self._data, name):
        return self
    if name == "preserve_format":
        raise RuntimeError("preserve memory format is unsupported by the contiguous operator")
    return bind(P["clone"], (self,), {"memory_format": name})


def to(self: Tensor, *args: Any, **kwargs: Any) -> Tensor:
    """Mirrors: ``torch.Tensor.to`` for dtype and device arguments (``ToCopyBackward0``).

    A device of another backend moves the values there (NOTE [Backends] in ``_backend``);
    the gradient flows back to the source device.
    """
    check_to_kwargs(kwargs)
    dtype = kwargs.get("dtype")
    copy = kwargs.get("copy", False)
    dev = kwargs.get("device")
    fmt = format_name(kwargs.get("memory_format"))
    for a in args:
        if isinstance(a, Tensor):
            dtype, dev = a.dtype, a.device
        elif isinstance(a, (str, _backend.device)):
            dev = a
        elif isinstance(a, int) and not isinstance(a, bool):  # an accelerator index
            dev = _backend.device(a)
        elif isinstance(a, (dict, list, set)):
            raise TypeError("to() received an invalid combination of arguments - got "
                            f"({type(a).__name__}), but expected a device, dtype or tensor")
        elif a is not None:
            check_one_dtype(dtype)
            # PyTorch's parser reads a Python float where a dtype goes as Python's float type
            dtype = float if isinstance(a, float) else a
    source = self.device
    if dev is not None:
        dev = parse_device(dev)
        _backend.backend_for(dev, copy=True)  # PyTorch's error for a device that is not available
        if dev.type == source.type and dev.index is None:
            dev = None  # "cuda" means the current device: the tensor's own
    extra = {}
    if fmt != "preserve_format":
        check_rank(fmt, self._data.ndim)
        extra["memory_format"] = fmt
    if dev is None or dev == source:
        if dtype is None or to_dtype(dtype).np == self._data.dtype:
            # PyTorch aliases when the format the strides suggest is the one asked for
            if not extra or suggest(self._data) == fmt:
                return clone(self) if copy else self
            return bind(P["_to_copy"], (self,), {"dtype": self.dtype, **extra})
        return bind(P["_to_copy"], (self,), {"dtype": to_dtype(dtype), **extra})
    params = {"dtype": to_dtype(dtype) if dtype is not None else self.dtype, "device": dev,
              "source": source, **extra}
    return bind(P["_to_copy"], (self,), params)


def cpu(self: Tensor, memory_format: Any = None) -> Tensor:
    """Mirrors: ``torch.Tensor.cpu`` (the tensor itself when it is on the CPU)."""
    if self.device.type == "cpu" and format_name(memory_format) == "preserve_format":
        return self
    return to(self, "cpu", memory_format=memory_format)


_OVERLAP = (
    "unsupported operation: more than one element of the written-to tensor refers to a single "
    "memory location. Please clone() the tensor before performing the operation."
)


def check_writable(self: Tensor) -> None:
    """PyTorch refuses in-place writes into expanded (self-overlapping) tensors."""
    arr = self._data
    if (
        0 in arr.strides
        and arr.size
        and any(st == 0 and n > 1 for st, n in zip(arr.strides, arr.shape, strict=False))
    ):
        raise RuntimeError(_OVERLAP)


def copy_(self: Tensor, src: Any, non_blocking: bool = False) -> Tensor:
    """Mirrors: ``torch.Tensor.copy_`` (broadcasts and casts `src`)."""
    check_writable(self)
    src = to_tensor_like(src, self)
    dst_shape, src_shape = self._data.shape, src._data.shape
    if src_shape != dst_shape:
        out = check_broadcast(dst_shape, src_shape)  # PyTorch's RuntimeError when none
        if out != dst_shape:
            raise RuntimeError(f"output with shape {list(dst_shape)} doesn't match the "
                               f"broadcast shape {list(out)}")
    return bind_inplace(P["copy_"], self, (self, src))


def fill_tensor_(self: Tensor, value: Tensor) -> Tensor:
    """``fill_`` with a 0-d tensor value (``FillBackward3``), as ``x[i] = v`` runs it."""
    check_writable(self)
    if value._data.ndim != 0:
        raise RuntimeError(
            "fill_ only supports 0-dimension value tensor but got tensor with "
            f"{value._data.ndim} dimensions."
        )
    return bind_inplace(P["fill_"], self, (self, value))


def _dtype_method(d: str) -> Any:
    def method(self: Tensor, memory_format: Any = None) -> Tensor:
        return to(self, to_dtype(d), memory_format=memory_format)

    method.__name__ = d
    return method


def swapaxes(input: Tensor, axis0: int, axis1: int) -> Tensor:
    """``transpose`` under NumPy's name and argument names. Mirrors: ``torch.swapaxes``."""
    return transpose(input, axis0, axis1)


METHODS = {
    "view": view,
    "reshape": reshape,
    "expand": expand,
    "expand_as": expand_as,
    "broadcast_to": broadcast_to,
    "sum_to_size": sum_to_size,
    "unsqueeze": unsqueeze,
    "squeeze": squeeze,
    "clone": clone,
    "contiguous": contiguous,
    "to": to,
    "as_strided": as_strided,
    "storage_offset": storage_offset_of,
    "copy_": copy_,
    "flatten": flatten,
    "unflatten": unflatten,
    "ravel": ravel,
    "transpose": transpose,
    "swapaxes": swapaxes,
    "swapdims": transpose,
    "permute": permute,
    "t": t,
    "movedim": movedim,
    "moveaxis": movedim,
    "narrow": narrow,
    "select": select,
    "unbind": unbind,
    "split": split_method,
    "chunk": chunk,
    "tensor_split": tensor_split,
    "diagonal": diagonal,
    "T": property(_prop_T),
    "mT": property(_prop_mT),
    "H": property(_prop_H),
    "mH": property(_prop_mH),
    "float": _dtype_method("float32"),
    "double": _dtype_method("float64"),
    "half": _dtype_method("float16"),
    "long": _dtype_method("int64"),
    "int": _dtype_method("int32"),
    "bool": _dtype_method("bool"),
    "cpu": cpu,
    "view_as": tensor_arguments(lambda self, other: view(self, *other._data.shape)),
    "reshape_as": lambda self, other: reshape(self, *other._data.shape),
    **_REARRANGE_METHODS,
}

swapdims = transpose
moveaxis = movedim
concat = cat
concatenate = cat
