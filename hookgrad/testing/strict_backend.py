"""A CPU test backend whose arrays are not NumPy arrays: it keeps the backend seam honest.

NOTE [Strict backend]
`StrictArray` wraps a NumPy array the way a CuPy array wraps GPU memory: NumPy ufuncs and
array functions called on it dispatch through ``__array_ufunc__``/``__array_function__`` (as
they do for CuPy), its methods and operators return `StrictArray`s, and it refuses the two
things a GPU array refuses: implicit conversion to NumPy (``np.asarray(x)`` raises TypeError)
and being mixed with a NumPy array of one or more dimensions in one computation. So code that
makes a new array with ``np.zeros(...)`` instead of asking the backend's namespace, or converts
to NumPy behind the seam, fails under this backend exactly where it would fail on a GPU.

`register()` installs it as device type ``"strict"`` (``hookgrad.ones(2, device="strict")``,
``t.to("strict")``); `unregister()` removes it. Tests run real workloads on it and compare with
the ``cpu`` results.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from hookgrad import _array_operators
from hookgrad._namespace_proxy import WrappingNamespace

from hookgrad._backend import Backend, register_backend, unregister_backend

DEVICE_TYPE = "strict"

__all__ = ["StrictArray", "StrictBackend", "register", "unregister", "DEVICE_TYPE"]


def _unwrap(x: Any, mixing: bool = True) -> Any:
    """The NumPy arrays inside `x`; with `mixing`, a NumPy array (not 0-d) met here is an error.

    Host data given to the namespace's constructors (``xp.asarray(np_array)``) is a transfer,
    not a mix: those calls unwrap without `mixing` unless a strict array takes part too.
    """
    if type(x) is StrictArray:
        return x._a
    if type(x) in (tuple, list):
        return type(x)(_unwrap(i, mixing) for i in x)
    if mixing and type(x) is np.ndarray and x.ndim:
        raise TypeError("strict backend: a NumPy array met a strict array in one computation "
                        "(an array was made outside the backend's namespace)")
    return x


def _unwrap_kwargs(kwargs: dict, mixing: bool = True) -> dict:
    return {k: _unwrap(v, mixing) for k, v in kwargs.items()}


def _has_strict(x: Any) -> bool:
    if type(x) is StrictArray:
        return True
    if type(x) in (tuple, list):
        return any(_has_strict(i) for i in x)
    return False


def _wrap(x: Any) -> Any:
    if isinstance(x, np.ndarray):
        return StrictArray(x)
    if isinstance(x, np.generic):  # NumPy scalars: a 0-d array of this backend
        return StrictArray(np.asarray(x))
    if type(x) is tuple:
        return tuple(_wrap(i) for i in x)
    if type(x) is list:
        return [_wrap(i) for i in x]
    return x


def _wrapped_callable(fn: Any) -> Any:
    def call(*args: Any, **kwargs: Any) -> Any:
        mixing = _has_strict(args) or _has_strict(tuple(kwargs.values()))
        return _wrap(fn(*_unwrap(args, mixing), **_unwrap_kwargs(kwargs, mixing)))
    call.__name__ = getattr(fn, "__name__", "call")
    return call


class StrictArray:
    """A NumPy array in a wrapper NumPy does not recognise as an ndarray (NOTE [Strict backend]).

    Mirrors: no PyTorch object (a test double of a non-NumPy array library such as CuPy).
    """

    __slots__ = ("_a",)

    def __init__(self, a: np.ndarray) -> None:
        self._a = a

    # -- the two dispatch protocols CuPy implements too
    def __array_ufunc__(self, ufunc: Any, method: str, *inputs: Any, **kwargs: Any) -> Any:
        out = kwargs.get("out")
        result = getattr(ufunc, method)(*_unwrap(inputs), **_unwrap_kwargs(kwargs))
        if out is not None:
            return out[0] if len(out) == 1 else out
        return _wrap(result)

    def __array_function__(self, func: Any, types: Any, args: Any, kwargs: Any) -> Any:
        return _wrap(func(*_unwrap(args), **_unwrap_kwargs(kwargs)))

    def __array__(self, *args: Any, **kwargs: Any) -> Any:
        raise TypeError("strict backend: implicit conversion to a NumPy array is not allowed; "
                        "use the backend's to_host")

    # -- attributes and methods of the wrapped array, results wrapped
    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):  # no __array_interface__ & co: NumPy must not see inside
            raise AttributeError(name)
        value = getattr(self._a, name)
        return _wrapped_callable(value) if callable(value) else _wrap(value)

    @property
    def shape(self) -> tuple:
        return self._a.shape

    @shape.setter
    def shape(self, value: tuple) -> None:  # CuPy's arrays take a new shape in place too
        self._a.shape = value

    @property
    def base(self) -> Any:
        return None if self._a.base is None else StrictArray(self._a.base)

    @property
    def T(self) -> StrictArray:  # noqa: N802 - NumPy's name
        return StrictArray(self._a.T)

    def __getitem__(self, index: Any) -> Any:
        return _wrap(self._a[_unwrap(index)])

    def __setitem__(self, index: Any, value: Any) -> None:
        self._a[_unwrap(index)] = _unwrap(value)

    def __len__(self) -> int:
        return len(self._a)

    def __iter__(self) -> Any:
        return (_wrap(x) for x in self._a)

    def __bool__(self) -> bool:
        return bool(self._a)

    def __float__(self) -> float:
        return float(self._a)

    def __int__(self) -> int:
        return int(self._a)

    def __index__(self) -> int:
        return self._a.__index__()

    def __repr__(self) -> str:
        return f"StrictArray({self._a!r})"

    def __copy__(self) -> StrictArray:
        return StrictArray(self._a.copy())

    def __deepcopy__(self, memo: dict) -> StrictArray:
        return StrictArray(self._a.copy())

    def __reduce__(self) -> Any:
        return (StrictArray, (self._a,))


_array_operators.install(StrictArray)  # every operator is its NumPy ufunc
StrictArray.__hash__ = None  # type: ignore[assignment]


class _Namespace(WrappingNamespace):
    """NumPy's namespace with every function's results wrapped (``xp`` of the backend)."""

    def _wrap(self, name: str, fn: Any) -> Any:
        return _wrapped_callable(fn)


class StrictBackend(Backend):
    """The ``strict`` test backend (NOTE [Strict backend])."""

    device_type = DEVICE_TYPE
    xp = _Namespace(np, "strict_numpy")
    array_type = StrictArray

    def owns(self, arr: Any) -> bool:
        return type(arr) is StrictArray

    def memory_owner(self, arr: Any) -> Any:
        owner = arr._a
        while isinstance(owner.base, np.ndarray):
            owner = owner.base
        return StrictArray(owner)

    def element_offset(self, arr: Any, owner: Any) -> int:
        delta = (arr._a.__array_interface__["data"][0]
                 - owner._a.__array_interface__["data"][0])
        return delta // arr._a.itemsize

    def as_strided(self, flat: Any, size: tuple, byte_strides: tuple) -> Any:
        return StrictArray(np.lib.stride_tricks.as_strided(flat._a, shape=size,
                                                           strides=byte_strides))

    def to_host(self, arr: Any) -> np.ndarray:
        return arr._a.copy()

    def from_host(self, host: np.ndarray, index: int | None = None) -> Any:
        return StrictArray(np.array(host))


def register() -> StrictBackend:
    """Install the strict backend as device type ``"strict"``."""
    backend = StrictBackend()
    register_backend(backend)
    return backend


def unregister() -> None:
    """Remove the strict backend."""
    unregister_backend(DEVICE_TYPE)
