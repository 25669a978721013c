"""More `Tensor` methods built on existing ops: ``addmm_``/``baddbmm_``,
``unfold`` (a strided view of sliding windows), ``prelu``, ``new_empty_strided``, ``dim_order``
and ``const_data_ptr``.

In-place forms compute the out-of-place result and ``copy_`` it into ``self``: values, gradients
and PyTorch's leaf/version errors are those of ``copy_`` (the ``grad_fn`` is ``CopyBackwards``).

Mirrors: the ``torch.Tensor`` methods of the same names.
"""

from __future__ import annotations

from typing import Any

import hookgrad._functional.creation as C
from hookgrad._functional._views import _view
from hookgrad._ops.registry import PRIMITIVES
from hookgrad._tensor import Tensor

__all__ = ["install"]


def _inplace(name: str) -> Any:
    def method(self: Tensor, *args: Any, **kwargs: Any) -> Tensor:
        return self.copy_(getattr(self, name[:-1])(*args, **kwargs))
    method.__name__ = name
    method.__doc__ = f"In-place ``{name[:-1]}``. Mirrors: ``torch.Tensor.{name}``."
    return method


def unfold(self: Tensor, dimension: int, size: int, step: int) -> Tensor:
    """A view of every `size`-long window along `dimension`, `step` apart (a new last dim).

    Mirrors: ``torch.Tensor.unfold``.
    """
    shape, strides = list(self.shape), list(self.stride())
    zero_dim = not shape
    if zero_dim:  # a 0-d tensor unfolds as a 1-element dim, without the window dim
        shape, strides = [1], [1]
    if not -len(shape) <= dimension < len(shape):
        raise IndexError(f"Dimension out of range (expected to be in range of [{-len(shape)}, "
                         f"{len(shape) - 1}], but got {dimension})")
    dim = dimension % len(shape)
    if size > shape[dim]:
        raise RuntimeError(f"maximum size for tensor at dimension {dim} is {shape[dim]} but "
                           f"size is {size}")
    if step <= 0:
        raise RuntimeError(f"step is {step} but must be > 0")
    # one view primitive: PyTorch's node is UnfoldBackward0 (not as_strided's)
    return _view(PRIMITIVES["unfold"], self, {"dimension": 0 if zero_dim else dim,
                                              "size": int(size), "step": int(step)})


def prelu(self: Tensor, weight: Tensor) -> Tensor:
    """``F.prelu(self, weight)``. Mirrors: ``torch.Tensor.prelu``."""
    from hookgrad.nn.functional import prelu as _prelu

    return _prelu(self, weight)


def new_empty_strided(self: Tensor, size: Any, stride: Any, *, dtype: Any = None,
                      device: Any = None, requires_grad: bool = False, **kwargs: Any) -> Tensor:
    """An uninitialised tensor with `size` and `stride`, of ``self``'s dtype unless given.

    Mirrors: ``torch.Tensor.new_empty_strided``.
    """
    size, stride = tuple(size), tuple(stride)
    n = 0 if 0 in size else 1 + sum((s - 1) * st for s, st in zip(size, stride))
    out = C.empty(n, dtype=dtype or self.dtype, device=device or self.device)
    out = out.as_strided(size, stride).detach()
    return out.requires_grad_(requires_grad) if requires_grad else out


def dim_order(self: Tensor, *, ambiguity_check: Any = False) -> tuple[int, ...]:
    """Dimensions from outermost to innermost in memory (by decreasing stride).

    Mirrors: ``torch.Tensor.dim_order``.
    """
    strides = self.stride()
    return tuple(sorted(range(self.dim()), key=lambda d: -strides[d]))


def const_data_ptr(self: Tensor) -> int:
    """``data_ptr()`` (read-only use). Mirrors: ``torch.Tensor.const_data_ptr``."""
    return self.data_ptr()


def install() -> None:
    """Attach the methods to `Tensor` (names it already has are left alone)."""
    methods = {"addmm_": _inplace("addmm_"), "baddbmm_": _inplace("baddbmm_"),
               "unfold": unfold, "prelu": prelu,
               "new_empty_strided": new_empty_strided, "dim_order": dim_order,
               "const_data_ptr": const_data_ptr}
    for name, fn in methods.items():
        if name not in Tensor.__dict__:
            setattr(Tensor, name, fn)
