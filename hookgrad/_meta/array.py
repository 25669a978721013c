"""`MetaArray`: an array of the ``meta`` backend - shape, dtype and strides, no data.

Layer 1 (NOTE [Meta backend] in hookgrad/_meta/__init__.py).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from hookgrad import _array_operators

from hookgrad._meta import _layout, dispatch, rules


class MetaArray:
    """An array that has a shape, a dtype and strides but no elements (NOTE [Meta backend]).

    Mirrors: the storage-less tensors of PyTorch's ``meta`` device (``torch.empty(...,
    device="meta")``); its interface is the part of ``numpy.ndarray`` hookgrad's ops use.
    """

    __slots__ = ("_shape", "dtype", "strides", "_offset", "_base", "_writeable", "__weakref__")

    def __init__(self, shape: Any, dtype: Any, strides: Any = None, offset: int = 0,
                 base: Any = None) -> None:
        self._shape = tuple(int(n) for n in shape)
        self.dtype = np.dtype(dtype)
        self.strides = (_layout.contiguous(self.shape, self.dtype.itemsize) if strides is None
                        else tuple(int(s) for s in strides))
        self._offset = offset  # bytes from the first byte of the owner's storage
        self._base = base  # the MetaArray owning the storage (None: this one owns it)
        self._writeable = True

    def _set_writeable(self, flag: bool) -> MetaArray:
        self._writeable = flag
        return self

    # -- metadata
    @property
    def shape(self) -> tuple:
        return self._shape

    @shape.setter
    def shape(self, value: Any) -> None:
        # NumPy's in-place reshape: a view's new strides, refused where a copy would be needed
        new = rules.view_reshape(self, value)
        if new is None:
            raise AttributeError("Incompatible shape for in-place modification. Use "
                                 "`.reshape()` to make a copy with the desired shape.")
        self._shape, self.strides = new.shape, new.strides

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    @property
    def itemsize(self) -> int:
        return self.dtype.itemsize

    @property
    def nbytes(self) -> int:
        return self.size * self.dtype.itemsize

    @property
    def base(self) -> MetaArray | None:
        return self._base

    @property
    def flags(self) -> _layout.Flags:
        return _layout.Flags(self)

    @property
    def T(self) -> MetaArray:  # noqa: N802 - NumPy's name
        return dispatch.method(self, "transpose", (), {})

    @property
    def mT(self) -> MetaArray:  # noqa: N802 - NumPy's name
        return np.swapaxes(self, -1, -2)

    @property
    def real(self) -> MetaArray:
        if self.dtype.kind != "c":
            return self
        return self._part(0)

    @property
    def imag(self) -> MetaArray:
        if self.dtype.kind != "c":  # (NumPy: a read-only zero array of a real one)
            return MetaArray(self.shape, self.dtype)._set_writeable(False)
        return self._part(self.dtype.itemsize // 2)

    def _part(self, byte: int) -> MetaArray:
        """The real (byte 0) or imaginary half of a complex array, as NumPy's views."""
        part = np.dtype(f"f{self.dtype.itemsize // 2}")
        return MetaArray(self.shape, part, self.strides, self._offset + byte,
                         self._base if self._base is not None else self)

    # -- dispatch protocols (NumPy's functions called on a MetaArray land here)
    def __array_ufunc__(self, ufunc: Any, method: str, *inputs: Any, **kwargs: Any) -> Any:
        return dispatch.ufunc(ufunc, method, inputs, kwargs)

    def __array_function__(self, func: Any, types: Any, args: Any, kwargs: Any) -> Any:
        return dispatch.function(func, args, kwargs)

    def __array__(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(dispatch.NO_DATA)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") or not hasattr(np.ndarray, name):
            raise AttributeError(f"'MetaArray' object has no attribute '{name}'")
        if not callable(getattr(np.ndarray, name)):
            return dispatch.method(self, "__getattribute__", (name,), {})

        def bound(*args: Any, **kwargs: Any) -> Any:
            return dispatch.method(self, name, args, kwargs)
        return bound

    def __getitem__(self, index: Any) -> Any:
        return dispatch.getitem(self, index)

    def __setitem__(self, index: Any, value: Any) -> None:
        if not self._writeable:
            raise ValueError("assignment destination is read-only")
        # a write: no data to write (the index is not checked against values either)

    # -- questions about the values
    def __bool__(self) -> bool:
        raise RuntimeError(dispatch.ITEM)

    def __float__(self) -> float:
        raise RuntimeError(dispatch.ITEM)

    def __int__(self) -> int:
        raise RuntimeError(dispatch.ITEM)

    def __index__(self) -> int:
        raise RuntimeError(dispatch.ITEM)

    def __complex__(self) -> complex:
        raise RuntimeError(dispatch.ITEM)

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    def __iter__(self) -> Any:
        return (self[i] for i in range(len(self)))

    def __repr__(self) -> str:
        return f"MetaArray(shape={self.shape}, dtype={self.dtype}, strides={self.strides})"

    def __copy__(self) -> MetaArray:
        return MetaArray(self.shape, self.dtype, _layout.dense_like(
            self.shape, self.strides, self.itemsize))

    def __deepcopy__(self, memo: dict) -> MetaArray:
        return self.__copy__()

    def __reduce__(self) -> Any:
        return (MetaArray, (self.shape, self.dtype.str, self.strides))

    __hash__ = None  # type: ignore[assignment]


_layout.MAKER.append(MetaArray)


_array_operators.install(MetaArray)  # every operator is its NumPy ufunc
