"""Reductions and scans. Mirrors the ``torch`` functions of the same names.

Dims are validated and normalized here (NOTE [Reduction dims] in `hookgrad._ops.reduction`).
Which primitive runs follows PyTorch's overloads, because the node name shows it: ``x.sum()`` is
``SumBackward0`` but ``x.sum(None)`` and ``x.sum(0)`` are ``SumBackward1``.
Value-selecting ops (max, min, sort, topk...) are in `hookgrad._functional.sorting` and
re-exported from here.
"""

from __future__ import annotations

import operator
import warnings
from typing import Any

from hookgrad._config import GLOBAL, STATE
from hookgrad._dispatch import bind, bind_inplace
from hookgrad._dtypes import to_dtype
from hookgrad._functional import sorting as _sorting
from hookgrad._functional.sorting import (  # noqa: F401  (re-exported)
    amax,
    amin,
    argmax,
    argmin,
    argsort,
    max,
    min,
    msort,
    numpy_aliases,
    reduce_dims,
    sort,
    topk,
)
from hookgrad._ops._rules import reduced_numel
from hookgrad._ops._shapes import normalize_dim
from hookgrad._ops.registry import PRIMITIVES as P
from hookgrad._tensor import Tensor

__all__ = [
    "sum", "mean", "prod", "var", "std", "var_mean", "std_mean", "nansum", "nanmean",
    "count_nonzero", "logsumexp", "cumsum", "cumprod", "all", "any",
    "amax", "amin", "max", "min", "argmax", "argmin", "sort", "argsort", "msort", "topk",
]

_NO_DIM: Any = object()  # "dim not given": PyTorch then runs another overload (another node)

def type_word(t: Any) -> str:
    """PyTorch's scalar type name in error texts (``Long``, ``Float``...)."""
    return t.scalar_type


def _dtype_param(dtype: Any, input: Tensor | None = None) -> dict:
    """The ``dtype`` param of a reduction; with `input`, PyTorch's refusal to record an
    integral result of an input that requires grad (its autograd has no such dtype)."""
    if dtype is None:
        return {}
    if dtype is float or dtype is int or dtype is bool:  # Python types name dtypes too
        dtype = to_dtype(dtype)
    if input is not None and type(dtype).__name__ == "dtype" and not (
            dtype.is_floating_point or dtype.is_complex) and input.requires_grad \
            and STATE.grad_enabled:
        raise RuntimeError(f"Autograd not support dtype: {dtype.scalar_type}")
    if type(dtype).__name__ != "dtype":  # PyTorch's argument parser takes torch.dtype only
        raise TypeError("received an invalid combination of arguments - got "
                        f"(dtype={type(dtype).__name__}), but expected torch.dtype dtype")
    return {"dtype": to_dtype(dtype)}


@numpy_aliases
def sum(input: Tensor, dim: Any = _NO_DIM, keepdim: bool = False, *,  # noqa: A001
        dtype: Any = None) -> Tensor:
    """Sum of all elements, or over `dim` (an int or a sequence of ints).

    Bool and integer inputs accumulate in int64. ``dim=[]`` or ``None`` reduce every dim.

    Mirrors: ``torch.sum`` (``SumBackward0`` without `dim`, ``SumBackward1`` with one).
    """
    if dim is _NO_DIM:
        return bind(P["sum"], (input,), _dtype_param(dtype, input))
    params = {"dim": reduce_dims(dim, input._data.ndim), "keepdim": keepdim}
    params.update(_dtype_param(dtype, input))
    return bind(P["sum_dim"], (input,), params)


def _float_reduction_check(name: str, input: Tensor, dtype: Any) -> None:
    d = to_dtype(dtype) if dtype is not None else input.dtype
    if not (d.is_floating_point or d.is_complex):
        which = "Optional" if dtype is not None else "Input"
        raise RuntimeError(
            f"{name}(): could not infer output dtype. {which} dtype must be either a floating "
            f"point or complex dtype. Got: {type_word(d)}"
        )


@numpy_aliases
def mean(input: Tensor, dim: Any = _NO_DIM, keepdim: bool = False, *,
         dtype: Any = None) -> Tensor:
    """Mean of all elements, or over `dim`; floating dtypes only (mean of nothing is nan).

    Mirrors: ``torch.mean`` (``MeanBackward0`` without `dim`, ``MeanBackward1`` with one).
    """
    _float_reduction_check("mean", input, dtype)
    if dim is _NO_DIM:
        return bind(P["mean"], (input,), _dtype_param(dtype))
    params = {"dim": reduce_dims(dim, input._data.ndim), "keepdim": keepdim}
    params.update(_dtype_param(dtype, input))
    return bind(P["mean_dim"], (input,), params)


@numpy_aliases
def prod(input: Tensor, dim: Any = _NO_DIM, keepdim: bool = False, *,
         dtype: Any = None) -> Tensor:
    """Product of all elements, or along one int `dim` (ints accumulate in int64).

    Mirrors: ``torch.prod`` (``ProdBackward0`` / ``ProdBackward1``; zero-safe gradients).
    """
    if dim is _NO_DIM:
        return bind(P["prod"], (input,), _dtype_param(dtype, input))
    if not isinstance(dim, int) or isinstance(dim, bool):
        raise TypeError(
            f"prod() received an invalid combination of arguments - got ({type(dim).__name__}), "
            "but expected one of:\n * (*, torch.dtype dtype = None)\n * (int dim, bool keepdim "
            "= False, *, torch.dtype dtype = None)\n"
        )
    params = {"dim": normalize_dim(dim, input._data.ndim), "keepdim": keepdim}
    params.update(_dtype_param(dtype, input))
    return bind(P["prod_dim_int"], (input,), params)


def _var_params(name: str, input: Tensor, dim: Any, unbiased: Any, keepdim: bool,
                correction: Any) -> dict:
    if isinstance(dim, bool):  # legacy var(input, unbiased)
        dim, unbiased = None, dim
    if unbiased is not None and correction is not None:
        raise RuntimeError(f"{name}: Only one of \"unbiased\" or \"correction\" may be given")
    if unbiased is not None:
        correction = 1 if unbiased else 0
    if input.dtype.category < 2:
        raise RuntimeError("std and var only support floating point and complex dtypes")
    dims = reduce_dims(dim, input._data.ndim) or None
    # ATen's reduction factor is input numel / output numel: 0 for an empty input
    n = reduced_numel(input._data.shape, dims if input._data.ndim else None) \
        if input._data.size else 0
    if n - (1 if correction is None else correction) <= 0:
        warnings.warn(
            f"{name}(): degrees of freedom is <= 0. Correction should be strictly less than the "
            "reduction factor (input numel divided by output numel).",
            UserWarning, stacklevel=3,
        )
    return {"dim": dims, "correction": correction, "keepdim": keepdim}


@numpy_aliases
def var(input: Tensor, dim: Any = None, unbiased: Any = None, keepdim: bool = False, *,
        correction: Any = None) -> Tensor:
    """Variance over `dim` (all dims by default) with Bessel's `correction` (default 1).

    Accepts PyTorch's legacy forms ``var(x, unbiased)`` and ``var(x, dim, unbiased, keepdim)``.

    Mirrors: ``torch.var`` (``VarBackward0``; warns when the degrees of freedom are <= 0).
    """
    params = _var_params("var", input, dim, unbiased, keepdim, correction)
    return bind(P["var"], (input,), params)


@numpy_aliases
def std(input: Tensor, dim: Any = None, unbiased: Any = None, keepdim: bool = False, *,
        correction: Any = None) -> Tensor:
    """Standard deviation: ``sqrt(var(...))`` with the same arguments.

    Mirrors: ``torch.std`` (``StdBackward0``; zero results get a zero gradient).
    """
    params = _var_params("std", input, dim, unbiased, keepdim, correction)
    return bind(P["std"], (input,), params)


@numpy_aliases
def var_mean(input: Tensor, dim: Any = None, unbiased: Any = None, keepdim: bool = False, *,
             correction: Any = None) -> tuple[Tensor, Tensor]:
    """``(var(...), mean(...))`` in one pass, with the arguments of `var`.

    Mirrors: ``torch.var_mean`` (one ``VarMeanBackward0`` node for both outputs).
    """
    params = _var_params("var_mean", input, dim, unbiased, keepdim, correction)
    return tuple(bind(P["var_mean"], (input,), params))  # type: ignore[return-value]


@numpy_aliases
def std_mean(input: Tensor, dim: Any = None, unbiased: Any = None, keepdim: bool = False, *,
             correction: Any = None) -> tuple[Tensor, Tensor]:
    """``(std(...), mean(...))`` in one pass, with the arguments of `std`.

    Mirrors: ``torch.std_mean`` (one ``StdMeanBackward0`` node; saves ``self`` and the std).
    """
    params = _var_params("std_mean", input, dim, unbiased, keepdim, correction)
    return tuple(bind(P["std_mean"], (input,), params))  # type: ignore[return-value]


@numpy_aliases
def nansum(input: Tensor, dim: Any = None, keepdim: bool = False, *,
           dtype: Any = None) -> Tensor:
    """Sum treating NaN as zero (NaN positions get a zero gradient).

    Mirrors: ``torch.nansum`` (``NansumBackward0``).
    """
    params = {"dim": reduce_dims(dim, input._data.ndim) or None, "keepdim": keepdim}
    params.update(_dtype_param(dtype, input))
    return bind(P["nansum"], (input,), params)


@numpy_aliases
def nanmean(input: Tensor, dim: Any = None, keepdim: bool = False, *,
            dtype: Any = None) -> Tensor:
    """Mean of the non-NaN elements: ``nansum / count`` (a ``DivBackward0`` node, as in ATen).

    Mirrors: ``torch.nanmean``.
    """
    if input.dtype.category != 2:
        raise RuntimeError(
            "nanmean(): expected input to have floating point or complex dtype but got "
            + type_word(input.dtype)
        )
    counts = bind(P["eq"], (input, input), {})  # a primitive: transforms (vmap) see the read
    count = sum(counts, dim, keepdim) if dim is not None else sum(counts)
    total = nansum(input, dim, keepdim, dtype=dtype)
    return total / count  # type: ignore[operator]


def count_nonzero(input: Tensor, dim: Any = None) -> Tensor:
    """Number of non-zero elements (over `dim`), as int64.

    Mirrors: ``torch.count_nonzero``.
    """
    return bind(P["count_nonzero"], (input,), {"dim": reduce_dims(dim, input._data.ndim)})


@numpy_aliases
def logsumexp(input: Tensor, dim: Any, keepdim: bool = False) -> Tensor:
    """``log(sum(exp(x), dim))`` computed stably; integers promote to the default float dtype.

    Mirrors: ``torch.logsumexp`` (``LogsumexpBackward0``).
    """
    params = {"dim": reduce_dims(dim, input._data.ndim) or None, "keepdim": keepdim}
    if input._data.dtype.kind in "fcV":
        return bind(P["logsumexp"], (input,), params)
    return bind(P["logsumexp"], (input,), params, GLOBAL.default_dtype)


def _scan(name: str, input: Tensor, dim: Any, dtype: Any) -> Tensor:
    params = {"dim": normalize_dim(operator.index(dim), input._data.ndim)}
    params.update(_dtype_param(dtype, input))
    return bind(P[name], (input,), params)


@numpy_aliases
def cumsum(input: Tensor, dim: int, *, dtype: Any = None) -> Tensor:
    """Cumulative sum along `dim` (ints accumulate in int64).

    Mirrors: ``torch.cumsum`` (``CumsumBackward0``).
    """
    return _scan("cumsum", input, dim, dtype)


@numpy_aliases
def cumprod(input: Tensor, dim: int, *, dtype: Any = None) -> Tensor:
    """Cumulative product along `dim`; gradients are exact at zeros, as in PyTorch.

    Mirrors: ``torch.cumprod`` (``CumprodBackward0``).
    """
    return _scan("cumprod", input, dim, dtype)


def _logical(name: str, input: Tensor, dim: Any, keepdim: bool) -> Tensor:
    dims = None if dim is None else reduce_dims(dim, input._data.ndim)
    return bind(P[name], (input,), {"dim": dims, "keepdim": keepdim})


@numpy_aliases
def all(input: Tensor, dim: Any = None, keepdim: bool = False) -> Tensor:  # noqa: A001
    """Whether every element (along `dim`) is non-zero; bool result (uint8 for uint8 input).

    Mirrors: ``torch.all`` (``dim=()`` reduces nothing).
    """
    return _logical("all", input, dim, keepdim)


@numpy_aliases
def any(input: Tensor, dim: Any = None, keepdim: bool = False) -> Tensor:  # noqa: A001
    """Whether any element (along `dim`) is non-zero; bool result (uint8 for uint8 input).

    Mirrors: ``torch.any`` (``dim=()`` reduces nothing).
    """
    return _logical("any", input, dim, keepdim)


def _inplace_scan(name: str) -> Any:
    def method(self: Tensor, dim: int, *, dtype: Any = None) -> Tensor:
        params = {"dim": normalize_dim(operator.index(dim), self._data.ndim)}
        params.update(_dtype_param(dtype))
        return bind_inplace(P[name], self, (self,), params)

    method.__name__ = name + "_"
    return method


METHODS = {
    "sum": sum, "mean": mean, "prod": prod, "var": var, "std": std, "logsumexp": logsumexp,
    "nansum": nansum, "nanmean": nanmean, "count_nonzero": count_nonzero,
    "cumsum": cumsum, "cumprod": cumprod, "all": all, "any": any,
    "cumsum_": _inplace_scan("cumsum"), "cumprod_": _inplace_scan("cumprod"),
    **_sorting.METHODS,
}
