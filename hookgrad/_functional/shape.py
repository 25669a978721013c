"""View, reshape and copy ops. Mirrors the ``torch`` functions of the same names."""

from __future__ import annotations

from typing import Any

from hookgrad._dispatch import bind, bind_inplace
from hookgrad._dtypes import to_dtype
from hookgrad._functional._common import to_tensor_like
from hookgrad._ops._shapes import infer_size, normalize_dim
from hookgrad._ops.registry import PRIMITIVES as P
from hookgrad._tensor import Tensor

__all__ = ["reshape", "clone", "unsqueeze", "squeeze", "as_strided"]


def _size_args(size: tuple) -> tuple:
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        return tuple(size[0])
    return tuple(int(s) for s in size)


def view(self: Tensor, *size: Any) -> Tensor:
    """Mirrors: ``torch.Tensor.view`` (shape form; ``view(dtype)`` is not supported)."""
    shape = infer_size(_size_args(size), self._data.size)
    return bind(P["view"], (self,), {"size": shape})


def reshape(input: Tensor, *shape: Any) -> Tensor:
    """A view when the memory layout allows it, else a copy. Mirrors: ``torch.reshape``."""
    size = infer_size(_size_args(shape), input._data.size)
    try:
        return bind(P["view"], (input,), {"size": size})
    except RuntimeError:
        return bind(P["view"], (clone(input),), {"size": size})


def expand(self: Tensor, *sizes: Any) -> Tensor:
    """Mirrors: ``torch.Tensor.expand`` (-1 keeps a dim)."""
    sizes = _size_args(sizes)
    shape = self._data.shape
    if len(sizes) < len(shape):
        raise RuntimeError(
            f"expand(torch.{self.dtype.legacy_name}{{{list(shape)}}}, size={list(sizes)}): the "
            "number of sizes provided "
            f"({len(sizes)}) must be greater or equal to the number of dimensions in the tensor "
            f"({len(shape)})"
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
        out.append(s)
    out = tuple(out)
    return bind(P["expand"], (self,), {"size": out})


def expand_as(self: Tensor, other: Tensor) -> Tensor:
    return expand(self, *other._data.shape)


def sum_to_size(self: Tensor, *size: Any) -> Tensor:
    """Mirrors: ``torch.Tensor.sum_to_size``."""
    size = _size_args(size)
    if tuple(size) == self._data.shape:
        return self
    return bind(P["sum_to_size"], (self,), {"size": tuple(size)})


def unsqueeze(input: Tensor, dim: int) -> Tensor:
    """Mirrors: ``torch.unsqueeze``."""
    return bind(P["unsqueeze"], (input,), {"dim": normalize_dim(dim, input._data.ndim + 1)})


def squeeze(input: Tensor, dim: Any = None) -> Tensor:
    """Mirrors: ``torch.squeeze`` (no dim: every size-1 dim)."""
    shape = input._data.shape
    if dim is None:
        dims = tuple(i for i, s in enumerate(shape) if s == 1)
    else:
        ds = (dim,) if isinstance(dim, int) else tuple(dim)
        dims = tuple(d for d in (normalize_dim(x, len(shape)) for x in ds) if shape and shape[d] == 1)
    return bind(P["squeeze_dim"], (input,), {"dim": dims})


def clone(input: Tensor, *, memory_format: Any = None) -> Tensor:
    """Mirrors: ``torch.clone``."""
    return bind(P["clone"], (input,))


def contiguous(self: Tensor, memory_format: Any = None) -> Tensor:
    """Mirrors: ``torch.Tensor.contiguous`` (returns self when already contiguous)."""
    if self._data.flags.c_contiguous:
        return self
    return clone(self)


def to(self: Tensor, *args: Any, **kwargs: Any) -> Tensor:
    """Mirrors: ``torch.Tensor.to`` for dtype and device (``cpu``) arguments."""
    dtype = kwargs.get("dtype")
    copy = kwargs.get("copy", False)
    for a in args:
        if isinstance(a, Tensor):
            dtype = a.dtype
        elif isinstance(a, str) or type(a).__name__ == "device":
            _check_device(a)
        elif a is not None:
            dtype = a
    if "device" in kwargs and kwargs["device"] is not None:
        _check_device(kwargs["device"])
    if dtype is None or to_dtype(dtype).np == self._data.dtype:
        return clone(self) if copy else self
    return bind(P["_to_copy"], (self,), {"dtype": to_dtype(dtype)})


def _check_device(dev: Any) -> None:
    from hookgrad._backend import device

    d = device(dev) if not isinstance(dev, device) else dev
    if d.type != "cpu":
        raise RuntimeError(f"hookgrad: device {d} is not available (CPU backend only)")


def as_strided(input: Tensor, size: Any, stride: Any, storage_offset: int = 0) -> Tensor:
    """Mirrors: ``torch.as_strided`` (offsets count from the tensor's first element)."""
    return bind(P["as_strided"], (input,), {"size": tuple(size), "stride": tuple(stride),
                                            "storage_offset": storage_offset})


def copy_(self: Tensor, src: Any, non_blocking: bool = False) -> Tensor:
    """Mirrors: ``torch.Tensor.copy_`` (broadcasts and casts `src`)."""
    src = to_tensor_like(src, self)
    return bind_inplace(P["copy_"], self, (self, src))


def _dtype_method(d: str) -> Any:
    def method(self: Tensor) -> Tensor:
        return to(self, to_dtype(d))

    method.__name__ = d
    return method


METHODS = {
    "view": view, "reshape": reshape, "expand": expand, "expand_as": expand_as,
    "sum_to_size": sum_to_size, "unsqueeze": unsqueeze, "squeeze": squeeze, "clone": clone,
    "contiguous": contiguous, "to": to, "as_strided": as_strided, "copy_": copy_,
    "float": _dtype_method("float32"), "double": _dtype_method("float64"),
    "half": _dtype_method("float16"), "long": _dtype_method("int64"),
    "int": _dtype_method("int32"), "bool": _dtype_method("bool"),
    "cpu": lambda self: self,
    "view_as": lambda self, other: view(self, *other._data.shape),
    "reshape_as": lambda self, other: reshape(self, *other._data.shape),
}
