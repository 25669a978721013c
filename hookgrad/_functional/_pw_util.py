"""Helpers shared by the elementwise wrappers: dtype checks, promotion of several operands,
and factories for the many one-input ops and their in-place variants.

Layer 4. Each wrapper stays a thin call into `bind`: the common case (a floating tensor) takes
one dtype test and no allocation.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from hookgrad._config import GLOBAL
from hookgrad._dispatch import bind, bind_inplace
from hookgrad._functional._common import result_type, wrap_scalar
from hookgrad._ops._checks import check_operand, check_tensor, not_tensor
from hookgrad._ops._shapes import check_broadcast_all
from hookgrad._ops.registry import PRIMITIVES as P
from hookgrad._tensor import Tensor

_EMPTY: dict = {}

def type_name(t: Tensor) -> str:
    return t.dtype.scalar_type


def require_float(t: Tensor, kernel: str) -> None:
    """PyTorch kernels without integer variants raise NotImplementedError naming the kernel."""
    try:
        kind = t._data.dtype.kind
    except AttributeError:
        raise not_tensor(kernel.split("_cpu")[0].split("Kernel")[0].lower(), t) from None
    if kind not in "fV":
        raise NotImplementedError(f'"{kernel}" not implemented for \'{type_name(t)}\'')


def reject_bool(t: Tensor, kernel: str) -> None:
    check_tensor(t, kernel.split("_")[0])
    if t._data.dtype.kind == "b":
        raise NotImplementedError(f'"{kernel}" not implemented for \'Bool\'')


def require_tensor(x: Any, fn: str, arg: str, pos: int) -> None:
    """The TypeError PyTorch's argument parser raises for a non-tensor where a tensor is due."""
    if not isinstance(x, Tensor):
        raise TypeError(
            f"{fn}(): argument '{arg}' (position {pos}) must be Tensor, not {type(x).__name__}"
        )


def promote(*args: Any) -> tuple[tuple, Any]:
    """Tensors for `args` (scalars wrapped) and the cast dtype `bind` needs (None if none).

    Implements PyTorch's promotion over any number of operands (tensors, 0-d tensors and Python
    scalars in their priority tiers), as `binary` does for two.
    """
    like = next((a for a in args if isinstance(a, Tensor)), None)
    if like is None:  # only numbers (torch.floor_divide(7, 2)): PyTorch wraps them all
        like = Tensor._make(np.zeros(()))
    shape = like._data.shape
    for a in args:
        if isinstance(a, Tensor) and a._data.shape != shape:
            check_broadcast_all([t._data.shape for t in args if isinstance(t, Tensor)])
            break
    first = like._data.dtype
    if all(isinstance(a, Tensor) and a._data.dtype == first for a in args):
        return args, None
    for i, a in enumerate(args):
        if not isinstance(a, Tensor):
            check_operand(a, "op", "other", i + 1)
    rt = result_type(*args)
    tensors = tuple(a if isinstance(a, Tensor) else wrap_scalar(a, rt, like) for a in args)
    np_rt = rt.np
    cast = rt if any(t._data.dtype != np_rt for t in tensors) else None
    return tensors, cast


def scalar_cast(t: Tensor, *scalars: Any) -> Any:
    """The cast dtype for `t` combined with Python scalar params (None when `t` wins)."""
    rt = result_type(t, *scalars)
    return rt if t._data.dtype != rt.np else None


def float_cast(t: Tensor) -> Any:
    """Cast for ops that compute in floating point: ints and bools go to the default dtype."""
    return None if t._data.dtype.kind in "fcV" else GLOBAL.default_dtype


def _mirrors(name: str, summary: str, torch_name: str | None) -> str:
    return f"{summary}\n\nMirrors: ``{torch_name or 'torch.' + name}``."


def float_unary(name: str, summary: str, prim: str | None = None,
                torch_name: str | None = None) -> Callable[..., Tensor]:
    """A one-input op computing in floating point (``sqrt(int)`` gives the default float)."""
    p = P[prim or name]

    def fn(input: Tensor) -> Tensor:
        try:
            kind = input._data.dtype.kind
        except AttributeError:
            raise not_tensor(name, input) from None
        if kind in "fcV":
            return bind(p, (input,))
        return bind(p, (input,), _EMPTY, GLOBAL.default_dtype)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = _mirrors(name, summary, torch_name)
    return fn


def same_unary(name: str, summary: str, prim: str | None = None,
               check: Callable[[Tensor], None] | None = None,
               torch_name: str | None = None) -> Callable[..., Tensor]:
    """A one-input op keeping the input's dtype (``abs``, ``floor``...); `check` vets it."""
    p = P[prim or name]

    def fn(input: Tensor) -> Tensor:
        if check is not None:
            check(input)
        elif not isinstance(input, Tensor):
            raise not_tensor(name, input)
        return bind(p, (input,))

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = _mirrors(name, summary, torch_name)
    return fn


def inplace_unary(name: str, prim: str | None = None, float_op: bool = False,
                  check: Callable[[Tensor], None] | None = None) -> Callable[..., Tensor]:
    """``Tensor.<name>_``: the op written into the tensor (see NOTE [In-place protocol])."""
    p = P[prim or name]

    def fn(self: Tensor) -> Tensor:
        if check is not None:
            check(self)
        cast = float_cast(self) if float_op else None
        return bind_inplace(p, self, (self,), _EMPTY, cast)

    fn.__name__ = fn.__qualname__ = name + "_"
    fn.__doc__ = f"In-place version of ``{name}``.\n\nMirrors: ``torch.Tensor.{name}_``."
    return fn


__all__ = [
    "type_name", "require_float", "reject_bool", "require_tensor", "promote",
    "scalar_cast", "float_cast", "float_unary", "same_unary", "inplace_unary",
]
