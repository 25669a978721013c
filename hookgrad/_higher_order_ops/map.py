"""``map``: apply a function to every leading slice of a pytree and stack the results."""

from __future__ import annotations

import builtins
from collections.abc import Callable
from typing import Any

__all__ = ["map"]


def map(f: Callable[..., Any], xs: Any, *args: Any) -> Any:  # noqa: A001 - PyTorch's name
    """``stack([f(xs[i], *args) for i in range(len)])`` over the leading dim of every leaf.

    Raises:
        RuntimeError: a leaf of `xs` is not a tensor, the leading dims differ or are 0.

    Mirrors: ``torch._higher_order_ops.map``.

    Example:
        >>> import hookgrad
        >>> from hookgrad._higher_order_ops.map import map
        >>> map(lambda x, c: x.sum() + c, hookgrad.ones(3, 2), hookgrad.tensor(1.0))
        tensor([3., 3., 3.])
    """
    from hookgrad._functional.shape import stack
    from hookgrad._tensor import Tensor
    from hookgrad.utils import _pytree as pytree

    leaves, spec = pytree.tree_flatten(xs)
    if not builtins.all(isinstance(t, Tensor) for t in leaves):
        raise RuntimeError(f"Mapped xs can only consist of tensors. Got xs {leaves}.")
    shapes = [t.shape for t in leaves]
    length = shapes[0][0]
    if length == 0:
        raise RuntimeError("Leading dimensions of mapped xs cannot be 0.")
    if builtins.any(s[0] != length for s in shapes):
        raise RuntimeError(f"Leading dimensions of mapped xs must be consistent. Got shapes "
                           f"{shapes}.")
    outs = [f(pytree.tree_unflatten([t[i] for t in leaves], spec), *args)
            for i in range(length)]
    flat = [pytree.tree_flatten(o)[0] for o in outs]
    out_spec = pytree.tree_flatten(outs[0])[1]
    return pytree.tree_unflatten([stack([o[k] for o in flat])
                                  for k in range(len(flat[0]))], out_spec)
