"""Argument checks shared by the public op wrappers: PyTorch's TypeError for a value that is not
a tensor (or not a number) where the op needs one.

PyTorch's argument parser rejects these before any kernel runs; hookgrad's wrappers read
``x._data`` first, so without these checks a string or ``None`` surfaces as an AttributeError
about ``_data`` (or is silently wrapped as an object array). The checks sit on the slow path:
wrappers call them from an ``except AttributeError`` (free when nothing is raised, Python 3.11+)
or where a non-tensor operand is about to be wrapped as a scalar.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any

import numpy as np

from hookgrad._tensor import Tensor

__all__ = ["not_tensor", "check_tensor", "check_operand", "is_number", "check_number", "int_args",
           "tensor_arguments"]


def not_tensor(fn: str, value: Any, arg: str = "input", pos: int = 1) -> TypeError:
    """PyTorch's TypeError for a non-tensor `value` passed as argument `arg` of `fn`."""
    return TypeError(f"{fn}(): argument '{arg}' (position {pos}) must be Tensor, not "
                     f"{type(value).__name__}")


def check_tensor(value: Any, fn: str, arg: str = "input", pos: int = 1) -> None:
    """Raise `not_tensor` unless `value` is a Tensor."""
    if not isinstance(value, Tensor):
        raise not_tensor(fn, value, arg, pos)


def is_number(value: Any) -> bool:
    """A Python or NumPy scalar PyTorch accepts as a ``Scalar`` argument."""
    if isinstance(value, (bool, int, float, complex, np.generic)):
        return not isinstance(value, (np.str_, np.bytes_, np.void))
    return isinstance(value, np.ndarray) and value.ndim == 0 and value.dtype.kind in "biufc"


def check_operand(value: Any, fn: str, arg: str = "other", pos: int = 2) -> None:
    """An operand of a tensor op must be a Tensor or a number (not None, a list, a string)."""
    if not isinstance(value, Tensor) and not is_number(value):
        raise not_tensor(fn, value, arg, pos)


def check_number(value: Any, fn: str, arg: str, pos: int) -> None:
    """A ``Scalar`` argument: a number (or a 0-dim tensor), PyTorch's TypeError otherwise."""
    if not is_number(value) and not (isinstance(value, Tensor) and value._data.ndim == 0):
        raise TypeError(f"{fn}(): argument '{arg}' (position {pos}) must be Number, not "
                        f"{type(value).__name__}")


def int_args(values: Any, fn: str, arg: str = "size") -> tuple[int, ...]:
    """An int-list argument (``reshape(2, 3)``, ``view([2, 3])``) as a tuple of ints; floats,
    strings and other non-integers raise PyTorch's TypeError instead of being truncated."""
    out = []
    for i, v in enumerate(values):
        if isinstance(v, bool) or not (isinstance(v, (int, np.integer)) or (
                isinstance(v, Tensor) and v._data.ndim == 0 and v._data.dtype.kind in "iu")):
            raise TypeError(f"{fn}(): argument '{arg}' (position 1) must be tuple of ints, but "
                            f"found element of type {type(v).__name__} at pos {i}")
        out.append(int(v))
    return tuple(out)


def tensor_arguments(fn: Callable[..., Any]) -> Callable[..., Any]:
    """`fn`, whose failure on an argument that is neither a tensor nor a number becomes
    PyTorch's TypeError naming it (its parser refuses those first). For ops off the hot path:
    the wrapper is one more call; the check runs only when `fn` raised AttributeError."""
    names = [p.name for p in inspect.signature(fn).parameters.values()
             if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except AttributeError:
            bound = [*zip(names, args), *kwargs.items()]
            # a value that is not even a number first; else a number read as a tensor
            for accept_numbers in (True, False):
                for pos, (name, value) in enumerate(bound, start=1):
                    if not isinstance(value, Tensor) and not (accept_numbers and
                                                              is_number(value)):
                        arg = "input" if name == "self" else name
                        raise not_tensor(fn.__name__, value, arg, pos) from None
            raise

    return wrapper
