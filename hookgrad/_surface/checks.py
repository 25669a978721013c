"""Private ``torch`` helpers that model code calls directly: runtime checks (``torch._check``
family, ``_assert_async``), ``_shape_as_tensor``, the softmax backward kernels and the sparse
index conversions.

Libraries reach for these outside any compiled code (transformers' checks, DeBERTa's custom
softmax backward, kornia's shape tensors, PyTorch Geometric's CSR conversions), so each runs
eagerly with PyTorch's results and exception types.

Mirrors: ``torch._check``, ``torch._check_with``, ``torch._check_tensor_all``,
``torch._check_tensor_all_with``, ``torch._assert``, ``torch._assert_async``,
``torch._shape_as_tensor``, ``torch._softmax_backward_data``,
``torch._log_softmax_backward_data``, ``torch._convert_indices_from_coo_to_csr``,
``torch._convert_indices_from_csr_to_coo``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from hookgrad._dtypes import int32, int64
from hookgrad._functional import creation as C
from hookgrad._tensor import Tensor

__all__ = ["_check", "_check_with", "_check_tensor_all", "_check_tensor_all_with", "_assert",
           "_assert_async", "_shape_as_tensor", "_softmax_backward_data",
           "_log_softmax_backward_data", "_convert_indices_from_coo_to_csr",
           "_convert_indices_from_csr_to_coo"]

_DEFAULT = ("Expected cond to be True, but got False. (Could this error message be improved? If "
            "so, please report an enhancement request to PyTorch.)")


def _check_with(error_type: type, cond: Any, message: Callable[[], str] | None = None) -> None:
    """Raise `error_type` (with ``message()`` if given) unless `cond` is True.

    Raises:
        TypeError: `cond` is not a bool.

    Mirrors: ``torch._check_with``.
    """
    if not isinstance(cond, (bool, np.bool_)):
        raise TypeError(f"cond must be a bool, but got {type(cond)}")
    if cond:
        return
    if message is None:
        raise error_type(_DEFAULT)
    if not callable(message):
        raise TypeError("message must be a callable")
    raise error_type(str(message()))


def _check(cond: Any, message: Callable[[], str] | None = None) -> None:
    """``_check_with(RuntimeError, ...)``. Mirrors: ``torch._check``."""
    _check_with(RuntimeError, cond, message)


def _check_tensor_all_with(error_type: type, cond: Tensor,
                           message: Callable[[], str] | None = None) -> None:
    """Raise unless every element of the boolean tensor `cond` is True.

    Mirrors: ``torch._check_tensor_all_with``.
    """
    if not isinstance(cond, Tensor):
        raise TypeError(f"cond must be a tensor, but got {type(cond)}")
    if cond.dtype.name != "bool":
        raise TypeError(f"cond tensor must have dtype torch.bool, but got {cond.dtype}")
    _check_with(error_type, bool(np.all(cond.numpy(force=True))), message)


def _check_tensor_all(cond: Tensor, message: Callable[[], str] | None = None) -> None:
    """Mirrors: ``torch._check_tensor_all``."""
    _check_tensor_all_with(RuntimeError, cond, message)


def _assert(condition: Any, message: str) -> None:
    """A Python ``assert`` that tracing keeps. Mirrors: ``torch._assert``."""
    assert condition, message  # noqa: S101 - PyTorch's function is exactly this


def _assert_async(tensor: Tensor, assert_msg: str | None = None) -> None:
    """Raise unless the one-element `tensor` is nonzero (synchronously on the CPU).

    Mirrors: ``torch._assert_async``.
    """
    if tensor.numel() != 1:
        raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous"
                           if tensor.numel() > 1 else
                           "Boolean value of Tensor with no values is ambiguous")
    if not bool(tensor.numpy(force=True).reshape(())):
        raise RuntimeError(assert_msg if assert_msg is not None else
                           "Expected Tensor with single nonzero value, but got zero")


def _shape_as_tensor(input: Tensor) -> Tensor:
    """The shape as an int64 tensor. Mirrors: ``torch._shape_as_tensor``."""
    return C.tensor(list(input.shape), dtype=int64)


def _softmax_backward_data(grad_output: Tensor, output: Tensor, dim: int,
                           input_dtype: Any) -> Tensor:
    """The input gradient of ``softmax`` from its output: ``y * (g - sum(g * y))``.

    Mirrors: ``torch._softmax_backward_data``.
    """
    grad = output * (grad_output - (grad_output * output).sum(dim, keepdim=True))
    return grad if grad.dtype is input_dtype else grad.to(input_dtype)


def _log_softmax_backward_data(grad_output: Tensor, output: Tensor, dim: int,
                               input_dtype: Any) -> Tensor:
    """The input gradient of ``log_softmax`` from its output: ``g - exp(y) * sum(g)``.

    Mirrors: ``torch._log_softmax_backward_data``.
    """
    grad = grad_output - output.exp() * grad_output.sum(dim, keepdim=True)
    return grad if grad.dtype is input_dtype else grad.to(input_dtype)


def _convert_indices_from_coo_to_csr(input: Tensor, size: int, *,
                                     out_int32: bool = False) -> Tensor:
    """Row pointers (``size + 1`` entries) of sorted COO row indices.

    Mirrors: ``torch._convert_indices_from_coo_to_csr``.
    """
    rows = input.numpy(force=True).astype(np.int64).ravel()
    ptr = np.searchsorted(rows, np.arange(size + 1), side="left")
    return C.tensor(ptr, dtype=int32 if out_int32 else int64)


def _convert_indices_from_csr_to_coo(crow_indices: Tensor, col_indices: Tensor, *,
                                     out_int32: bool = False, transpose: bool = False) -> Tensor:
    """``[rows; cols]`` of a CSR matrix (``[cols; rows]`` with `transpose`).

    Mirrors: ``torch._convert_indices_from_csr_to_coo``.
    """
    ptr = crow_indices.numpy(force=True).astype(np.int64).ravel()
    rows = np.repeat(np.arange(len(ptr) - 1), np.diff(ptr))
    cols = col_indices.numpy(force=True).astype(np.int64).ravel()
    pair = np.stack([cols, rows] if transpose else [rows, cols])
    return C.tensor(pair, dtype=int32 if out_int32 else int64)
