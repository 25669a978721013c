"""Value-selecting ops: amax/amin, max/min, argmax/argmin, sort/argsort/msort, topk.

Mirrors the ``torch`` functions of the same names; ops with two outputs return the named tuples
of `hookgrad.return_types`. How the indices reach the node: NOTE [Indices as inputs] in
`hookgrad._ops.sorting`. Re-exported by `hookgrad._functional.reduction`.
"""

from __future__ import annotations

import functools
import inspect
import operator
from collections.abc import Callable
from typing import Any

import numpy as np

from hookgrad import return_types
from hookgrad._dispatch import bind
from hookgrad._ops._checks import int_args, not_tensor
from hookgrad._ops._shapes import normalize_dim
from hookgrad._ops.registry import PRIMITIVES as P
from hookgrad._tensor import Tensor

__all__ = ["amax", "amin", "max", "min", "argmax", "argmin", "sort", "argsort", "msort", "topk"]

_UNSET: Any = object()  # "argument not given": PyTorch then picks another overload/node


def numpy_aliases(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Accept NumPy's ``axis=``/``keepdims=`` for ``dim=``/``keepdim=`` (as PyTorch does), and
    refuse a `keepdim` that is not a bool as PyTorch's argument parser does."""
    params = list(inspect.signature(fn).parameters)
    keepdim_at = params.index("keepdim") if "keepdim" in params else None

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        if kwargs:
            for alias, name in (("axis", "dim"), ("keepdims", "keepdim")):
                if alias in kwargs:
                    if name in kwargs:
                        raise TypeError(f"{fn.__name__}() got an unexpected keyword argument "
                                        f"'{alias}'")
                    kwargs[name] = kwargs.pop(alias)
        if keepdim_at is not None:
            keep = args[keepdim_at] if len(args) > keepdim_at else kwargs.get("keepdim", False)
            if not isinstance(keep, (bool, np.bool_)):
                raise TypeError(f"{fn.__name__}(): argument 'keepdim' must be bool, not "
                                f"{type(keep).__name__}")
        try:
            return fn(*args, **kwargs)
        except AttributeError:  # free unless raised: a non-tensor input, as PyTorch words it
            first = args[0] if args else kwargs.get("input")
            if not isinstance(first, Tensor):
                raise not_tensor(fn.__name__, first) from None
            raise

    return wrapper


def reduce_dims(dim: Any, ndim: int) -> tuple[int, ...] | None:
    """Normalize `dim` (int or sequence) to sorted distinct dims; PyTorch's errors."""
    if dim is None:
        return None
    if type(dim) is int and -ndim <= dim < ndim:  # the common case, without the loop below
        return (dim % ndim,)
    dims = (dim,) if isinstance(dim, int) else tuple(dim)
    out: list[int] = []
    for d in dims:
        n = normalize_dim(operator.index(d), ndim)
        if n in out:
            raise RuntimeError(f"dim {n} appears multiple times in the list of dims")
        out.append(n)
    return tuple(sorted(out))


def _dims(dim: Any, ndim: int) -> tuple[int, ...]:
    return reduce_dims(dim, ndim) or ()


def _check_full(name: str, input: Tensor, exc: type = RuntimeError) -> None:
    if input._data.size == 0:
        tail = " Specify the reduction dim with the 'dim' argument." if exc is RuntimeError else ""
        raise exc(
            f"{name}(): Expected reduction dim to be specified for input.numel() == 0.{tail}"
        )


def _check_dims(name: str, input: Tensor, dims: tuple[int, ...]) -> None:
    shape = input._data.shape
    for d in dims:
        if shape and shape[d] == 0:
            raise IndexError(f"{name}(): Expected reduction dim {d} to have non-zero size.")


def _amax(name: str, input: Tensor, dim: Any, keepdim: bool) -> Tensor:
    dims = _dims(dim, input._data.ndim)
    if dims:
        _check_dims(name, input, dims)
    else:
        _check_full(name, input)
    return bind(P[name], (input,), {"dim": dims, "keepdim": keepdim})


@numpy_aliases
def amax(input: Tensor, dim: Any = (), keepdim: bool = False) -> Tensor:
    """Largest value over `dim` (every dim by default); ties share the gradient evenly.

    Mirrors: ``torch.amax`` (``AmaxBackward0``).
    """
    return _amax("amax", input, dim, keepdim)


@numpy_aliases
def amin(input: Tensor, dim: Any = (), keepdim: bool = False) -> Tensor:
    """Smallest value over `dim` (every dim by default); ties share the gradient evenly.

    Mirrors: ``torch.amin`` (``AminBackward0``).
    """
    return _amax("amin", input, dim, keepdim)


def _extreme(name: str, input: Tensor, dim: Any, keepdim: bool) -> Any:
    if isinstance(dim, Tensor):  # max(a, b): the elementwise binary op
        return getattr(input, "maximum" if name == "max" else "minimum")(dim)
    if dim is _UNSET:
        _check_full(name, input)
        return bind(P[name], (input,))
    ndim = input._data.ndim
    d = normalize_dim(operator.index(dim), ndim)
    _check_dims(name, input, (d,))
    params = {"dim": d, "keepdim": keepdim}
    indices = bind(P["argmax" if name == "max" else "argmin"], (input,), params)
    values = bind(P[name + "_dim"], (input, indices), params)
    return getattr(return_types, name)((values, indices))


@numpy_aliases
def max(input: Tensor, dim: Any = _UNSET, keepdim: bool = False) -> Any:  # noqa: A001
    """``max(x)``: the largest element; ``max(x, dim)``: ``(values, indices)``; ``max(x, y)``.

    Full reductions spread the gradient evenly over ties; ``dim`` reductions pick the first
    maximal index (the first NaN if any), as PyTorch does on CPU.

    Mirrors: ``torch.max`` (``MaxBackward1`` / ``MaxBackward0`` / ``maximum``).
    """
    return _extreme("max", input, dim, keepdim)


@numpy_aliases
def min(input: Tensor, dim: Any = _UNSET, keepdim: bool = False) -> Any:  # noqa: A001
    """``min(x)``, ``min(x, dim)`` -> ``(values, indices)``, or ``min(x, y)``.

    Mirrors: ``torch.min`` (``MinBackward1`` / ``MinBackward0`` / ``minimum``).
    """
    return _extreme("min", input, dim, keepdim)


def _arg(name: str, input: Tensor, dim: Any, keepdim: bool) -> Tensor:
    if input._data.dtype.kind == "b":
        raise RuntimeError(f"{name}(): does not support bool input")
    if dim is None:
        _check_full(name, input, IndexError)
        return bind(P[name], (input,), {"dim": None, "keepdim": keepdim})
    d = normalize_dim(operator.index(dim), input._data.ndim)
    _check_dims(name, input, (d,))
    return bind(P[name], (input,), {"dim": d, "keepdim": keepdim})


@numpy_aliases
def argmax(input: Tensor, dim: Any = None, keepdim: bool = False) -> Tensor:
    """Index of the first largest element (flattened when `dim` is None).

    Mirrors: ``torch.argmax``.
    """
    return _arg("argmax", input, dim, keepdim)


@numpy_aliases
def argmin(input: Tensor, dim: Any = None, keepdim: bool = False) -> Tensor:
    """Index of the first smallest element (flattened when `dim` is None).

    Mirrors: ``torch.argmin``.
    """
    return _arg("argmin", input, dim, keepdim)


@numpy_aliases
def argsort(input: Tensor, dim: int = -1, descending: bool = False, stable: bool = False) -> Tensor:
    """Indices that sort `input` along `dim` (NaN sorts as largest).

    Mirrors: ``torch.argsort``.
    """
    d = normalize_dim(operator.index(dim), input._data.ndim)
    return bind(P["argsort"], (input,), {"dim": d, "descending": descending, "stable": stable})


@numpy_aliases
def sort(input: Tensor, dim: int = -1, descending: bool = False, *, stable: Any = _UNSET) -> Any:
    """Sorted values and their indices along `dim`, as ``(values, indices)``.

    Mirrors: ``torch.sort`` (``SortBackward0``; ``SortBackward1`` when `stable` is given).
    Tied values come out in PyTorch's CPU order (``std::sort``'s unless ``stable=True``).
    """
    indices = argsort(input, dim, descending, stable=stable is not _UNSET and bool(stable))
    prim = P["sort"] if stable is _UNSET else P["sort_stable"]
    d = normalize_dim(operator.index(dim), input._data.ndim)
    values = bind(prim, (input, indices), {"dim": d})
    return return_types.sort((values, indices))


def msort(input: Tensor) -> Tensor:
    """``sort(input, dim=0).values``. Mirrors: ``torch.msort``."""
    return sort(input, 0).values


@numpy_aliases
def topk(input: Tensor, k: int, dim: int = -1, largest: bool = True, sorted: bool = True) -> Any:  # noqa: A002
    """The `k` largest (or smallest) values along `dim` and their indices.

    Mirrors: ``torch.topk`` (``TopkBackward0``). Which of several tied values is taken, and
    the order with ``sorted=False``, follow PyTorch's CPU algorithm for slices of up to 4096
    elements (NOTE [Tie order] in `hookgrad._ops._stdsort`).
    """
    ndim = input._data.ndim
    d = normalize_dim(operator.index(dim), ndim)
    if input._data.dtype.kind == "b":
        raise RuntimeError("topk does not support bool dtypes on CPU")
    size = input._data.shape[d] if ndim else 1
    k = int_args((k,), "topk", "k")[0]
    if not 0 <= k <= size:
        raise RuntimeError("selected index k out of range")
    params = {"k": k, "dim": d, "largest": largest, "sorted": sorted}
    indices = bind(P["topk_indices"], (input,), params)
    values = bind(P["topk"], (input, indices), {"dim": d})
    return return_types.topk((values, indices))


METHODS = {
    "amax": amax, "amin": amin, "max": max, "min": min, "argmax": argmax, "argmin": argmin,
    "sort": sort, "argsort": argsort, "msort": msort, "topk": topk,
}
