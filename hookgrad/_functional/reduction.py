"""Reductions. Mirrors the ``torch`` functions of the same names."""

from __future__ import annotations

from typing import Any

from hookgrad._dispatch import bind
from hookgrad._dtypes import to_dtype
from hookgrad._ops.registry import PRIMITIVES as P
from hookgrad._tensor import Tensor

__all__ = ["sum"]


def sum(input: Tensor, dim: Any = None, keepdim: bool = False, *, dtype: Any = None) -> Tensor:  # noqa: A001
    """Mirrors: ``torch.sum`` (``SumBackward0`` without dim, ``SumBackward1`` with one)."""
    d = None if dtype is None else to_dtype(dtype)
    if dim is None:
        return bind(P["sum"], (input,), {"dtype": d} if d is not None else {})
    if isinstance(dim, list):
        dim = tuple(dim)
    return bind(P["sum_dim"], (input,), {"dim": dim, "keepdim": keepdim, "dtype": d})


METHODS = {"sum": sum}
