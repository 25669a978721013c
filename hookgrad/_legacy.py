"""PyTorch's legacy and compatibility surface: ``torch.Tensor(data)``, the typed tensor classes,
``torch.bfloat16`` and the memory formats.

NOTE [Legacy constructors]
``torch.Tensor(...)`` and ``torch.FloatTensor(...)`` are PyTorch's pre-``torch.tensor`` factories
and older tools still call them: no argument gives an empty 1-D tensor, integers (or one
``torch.Size``) give an uninitialised tensor of that shape (hookgrad zero-fills it, like
``hookgrad.empty``), a tensor gives an alias sharing its memory, anything else is data copied in
the class's dtype (``torch.Tensor`` uses the default dtype). Only ``device=`` is accepted as a
keyword, as in PyTorch. ``isinstance(t, torch.FloatTensor)`` is true for float32 tensors.

``torch.bfloat16`` itself lives in `hookgrad._dtypes` (a real 2-byte dtype, NOTE [bfloat16] in
`hookgrad._dispatch`); it is re-exported here with its legacy class ``BFloat16Tensor``.
"""

from __future__ import annotations

from typing import Any

from hookgrad._dtypes import (
    Size,
    bfloat16,
    bool_,
    dtype,
    float16,
    float32,
    float64,
    get_default_dtype,
    int8,
    int16,
    int32,
    int64,
    uint8,
)
from hookgrad._functional import creation as _creation
from hookgrad._tensor import Tensor
from hookgrad._storage import TypedStorage, UntypedStorage

__all__ = [
    "bfloat16", "memory_format", "contiguous_format", "channels_last", "channels_last_3d",
    "preserve_format", "FloatTensor", "DoubleTensor", "HalfTensor", "LongTensor", "IntTensor",
    "ShortTensor", "CharTensor", "ByteTensor", "BoolTensor", "BFloat16Tensor", "install",
    "layout", "strided", "is_complex", "typename",
]

class memory_format:  # noqa: N801 - torch.memory_format is public API
    """A tensor memory layout tag (hookgrad arrays are always row-major; the tag is accepted).

    Mirrors: ``torch.memory_format``.
    """

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"torch.{self.name}"

    def __reduce__(self) -> str:
        return self.name


contiguous_format = memory_format("contiguous_format")
channels_last = memory_format("channels_last")
channels_last_3d = memory_format("channels_last_3d")
preserve_format = memory_format("preserve_format")


class layout:  # noqa: N801 - torch.layout is public API
    """A tensor storage layout (hookgrad tensors are always strided). Mirrors: ``torch.layout``."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"torch.{self.name}"

    def __reduce__(self) -> str:
        return self.name


strided = layout("strided")


def is_complex(input: Tensor) -> bool:
    """Whether `input` holds complex numbers. Mirrors: ``torch.is_complex``."""
    if not isinstance(input, Tensor):
        raise TypeError(f"is_complex(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    return input._data.dtype.kind == "c"


def typename(obj: Any) -> str:
    """``'torch.FloatTensor'`` for tensors, else the qualified class name.

    Mirrors: ``torch.typename``.
    """
    if isinstance(obj, Tensor):
        return obj.type()
    module = getattr(type(obj), "__module__", "")
    name = getattr(type(obj), "__qualname__", type(obj).__name__)
    return name if module in ("", "builtins", None) else f"{module}.{name}"


def _is_size(args: tuple) -> bool:
    if len(args) == 1 and isinstance(args[0], Size):
        return True
    return bool(args) and all(type(a) is int for a in args)


def legacy_new(dt: dtype | None, args: tuple, kwargs: dict) -> Tensor:
    """The legacy constructor of NOTE [Legacy constructors] (`dt` None: the default dtype)."""
    unknown = [k for k in kwargs if k != "device"]
    if unknown:
        raise TypeError(
            f"new() received an invalid combination of arguments - got unexpected keyword "
            f"argument {unknown[0]!r}; expected (*, device), (Tensor other), "
            "(tuple of ints size, *, device) or (object data, *, device)")
    target = dt if dt is not None else get_default_dtype()
    if not args:
        return _creation.empty(0, dtype=target)
    if _is_size(args):
        return _creation.empty(*(args[0] if isinstance(args[0], Size) else args), dtype=target)
    if len(args) != 1:
        raise TypeError("new() received an invalid combination of arguments: expected one "
                        "data argument or integer sizes")
    data = args[0]
    if isinstance(data, Tensor):
        return data.detach() if dt is None or data.dtype is target else data.to(target)
    if isinstance(data, (UntypedStorage, TypedStorage)):
        return data._as_tensor(target)
    if isinstance(data, (str, bytes)) or not hasattr(data, "__len__"):
        raise TypeError(f"new(): invalid data type '{type(data).__name__}'")
    return _creation.tensor(data, dtype=target)


class _TensorType(type):
    """Metaclass of the typed tensor classes: calling one builds a tensor of its dtype."""

    _dtype: dtype

    def __call__(cls, *args: Any, **kwargs: Any) -> Tensor:
        return legacy_new(cls._dtype, args, kwargs)

    def __instancecheck__(cls, obj: Any) -> bool:
        return isinstance(obj, Tensor) and obj.dtype is cls._dtype

    @property
    def dtype(cls) -> dtype:
        return cls._dtype


def _typed(name: str, dt: dtype) -> type:
    doc = (f"Legacy constructor of {dt!r} tensors (see NOTE [Legacy constructors] in "
           f"hookgrad._legacy).\n\n    Mirrors: ``torch.{name}``.\n    ")
    return _TensorType(name, (), {"_dtype": dt, "__doc__": doc, "__module__": "hookgrad"})


FloatTensor = _typed("FloatTensor", float32)
DoubleTensor = _typed("DoubleTensor", float64)
HalfTensor = _typed("HalfTensor", float16)
BFloat16Tensor = _typed("BFloat16Tensor", bfloat16)
LongTensor = _typed("LongTensor", int64)
IntTensor = _typed("IntTensor", int32)
ShortTensor = _typed("ShortTensor", int16)
CharTensor = _typed("CharTensor", int8)
ByteTensor = _typed("ByteTensor", uint8)
BoolTensor = _typed("BoolTensor", bool_)


def _tensor_new(cls: type, *args: Any, **kwargs: Any) -> Tensor:
    t = legacy_new(None, args, kwargs)
    if cls is Tensor:
        return t
    sub = cls._make(t._data)  # a subclass without its own __new__: same data, its class
    return sub


def _tensor_init(self: Tensor, *args: Any, **kwargs: Any) -> None:
    # Everything happened in __new__ (a returned non-instance skips __init__ anyway).
    pass


def install() -> None:
    """Make ``Tensor(...)`` the legacy constructor (NOTE [Legacy constructors]) and add the
    layout flags tools read (every hookgrad tensor is a dense, strided CPU tensor)."""
    Tensor.__new__ = _tensor_new  # type: ignore[method-assign,assignment]
    Tensor.__init__ = _tensor_init  # type: ignore[method-assign]
    for flag in ("is_sparse", "is_quantized", "is_mkldnn", "is_meta", "is_nested"):
        if not hasattr(Tensor, flag):
            setattr(Tensor, flag, property(lambda self: False))
    if not hasattr(Tensor, "layout"):
        Tensor.layout = property(lambda self: strided)  # type: ignore[attr-defined]
