"""``scan``: the carry-threading loop of PyTorch's higher-order ops, run eagerly."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["scan"]


def scan(combine_fn: Callable[[Any, Any], tuple[Any, Any]], init: Any, xs: Any, *,
         dim: int = 0, reverse: bool = False) -> tuple[Any, Any]:
    """Thread a carry through the slices of ``xs`` along ``dim``, stacking each step's output.

    Step ``i`` calls ``combine_fn(carry, xs_i)`` (``xs_i`` the pytree of slices ``i``) and gets
    ``(next_carry, y_i)``; the result is the last carry and every ``y`` stacked along ``dim``.
    Slices are visited first to last (last to first with ``reverse=True``; the stacked outputs
    are then flipped back), so a floating-point carry rounds in PyTorch's order. Gradients
    flow through the ops each step records; the result's ``grad_fn`` is hookgrad's stack/view
    node where PyTorch's is its fused ``ScanAutogradOpBackward`` (values and gradients agree).

    Raises:
        RuntimeError: `combine_fn` is not callable, `init` is empty or holds a non-tensor, an
            ``xs`` leaf is not a tensor, lacks `dim` or has no element along it, or
            `reverse` is not a bool (PyTorch's messages).

    Mirrors: ``torch._higher_order_ops.scan.scan``.

    Example:
        >>> import hookgrad
        >>> from hookgrad._higher_order_ops.scan import scan
        >>> carry, ys = scan(lambda c, x: (c + x, c * x), hookgrad.zeros(2),
        ...                  hookgrad.tensor([[1., 2.], [3., 4.]]))
        >>> carry
        tensor([4., 6.])
    """
    from hookgrad._functional.shape import movedim, stack
    from hookgrad._ops._shapes import normalize_dim
    from hookgrad._tensor import Tensor
    from hookgrad.utils import _pytree as pytree

    leaves_init, spec_init = pytree.tree_flatten(init)
    leaves_xs, spec_xs = pytree.tree_flatten(xs)
    if not callable(combine_fn):
        raise RuntimeError(f"Combine_fn must be a callable, but got {combine_fn}")
    if not leaves_init:
        raise RuntimeError("scan() operator requires init leaves.")
    for leaf in leaves_init:
        if not isinstance(leaf, Tensor):
            raise RuntimeError(f"All init leaves must be a Tensor but got {leaf}")
    for leaf in leaves_xs:
        if not isinstance(leaf, Tensor):
            raise RuntimeError(f"All xs leaves must be a Tensor but got {leaf}")
    if not leaves_xs:
        return init, pytree.tree_unflatten([], spec_xs)
    if not isinstance(dim, int):
        raise RuntimeError("Dim must be an int, but got " + str(type(dim)))
    dim = normalize_dim(dim, leaves_xs[0].ndim)
    if not isinstance(reverse, bool):
        raise RuntimeError("Reverse must be a bool, but got " + str(type(reverse)))
    if any(x.ndim <= dim or x.shape[dim] == 0 for x in leaves_xs):
        raise RuntimeError("All xs leaves must at least have 'dim' number of dimensions and "
                           "scan dimension > 0")
    length = leaves_xs[0].shape[dim]
    order = range(length - 1, -1, -1) if reverse else range(length)
    carry = init
    steps: list[list[Any]] = []
    out_spec = None
    for i in order:
        x_i = pytree.tree_unflatten([x.select(dim, i) for x in leaves_xs], spec_xs)
        result = combine_fn(carry, x_i)
        if not isinstance(result, (tuple, list)) or len(result) != 2:
            raise RuntimeError("combine_fn must return a tuple (next_carry, y)")
        carry, y = result
        flat_y, out_spec = pytree.tree_flatten(y)
        steps.append(flat_y)
    if reverse:
        steps.reverse()
    stacked = []
    for k, first in enumerate(steps[0]):
        if not isinstance(first, Tensor):
            stacked.append(None)
            continue
        column = stack([step[k] for step in steps])
        stacked.append(movedim(column, 0, dim) if 0 < dim < column.ndim else column)
    return carry, pytree.tree_unflatten(stacked, out_spec)
