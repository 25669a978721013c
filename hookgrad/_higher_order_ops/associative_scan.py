"""``associative_scan``: an inclusive scan by a parallel prefix tree, as PyTorch's."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["associative_scan"]


def _tree_scan(combine: Callable[..., list[Any]], elems: list[Any]) -> list[Any]:
    """PyTorch's recursive odd/even prefix tree on dim 0: the same pairs combined in the same
    order, so a floating-point scan rounds as PyTorch's does."""
    from hookgrad._functional.creation import zeros
    from hookgrad._functional.shape import cat, stack

    n = elems[0].shape[0]
    if n < 2:
        return elems
    pairs = combine([e[0:-1:2] for e in elems], [e[1::2] for e in elems])
    odd = _tree_scan(combine, pairs)
    if n % 2 == 0:
        even = combine([e[:-1] for e in odd], [e[2::2] for e in elems])
    else:
        even = combine(odd, [e[2::2] for e in elems])
    even = [cat([e[0:1], r]) if r.numel() > 0 else e[0:1]
            for e, r in zip(elems, even)]
    merged = []
    for a, b in zip(even, odd):
        # interleave a (ceil(n/2) rows) with b (floor(n/2) rows)
        if a.shape[0] == b.shape[0] + 1:
            pad = zeros((1,) + tuple(b.shape[1:]), dtype=b.dtype)
            both = stack([a, cat([b, pad])], dim=1).flatten(0, 1)
            merged.append(both[:a.shape[0] + b.shape[0]])
        else:
            merged.append(stack([a, b], dim=1).flatten(0, 1))
    return merged


def associative_scan(combine_fn: Callable[[Any, Any], Any], xs: Any, dim: int,
                     reverse: bool = False, combine_mode: str = "pointwise") -> Any:
    """Inclusive scan of ``xs`` along ``dim`` with an associative ``combine_fn``.

    ``combine_mode="generic"`` runs ``combine_fn`` batched over pairs of slices (through
    ``vmap``) in PyTorch's prefix-tree order. ``"pointwise"`` needs a CUDA or XPU tensor in
    PyTorch, so on a CPU it raises PyTorch's ``ValueError``.

    Raises:
        ValueError: `combine_fn` not callable, `dim` not an int, an unknown or (on CPU)
            pointwise `combine_mode`, no leaves, a non-tensor leaf, or a leaf without
            elements along `dim`.
        RuntimeError: `reverse` is not a bool.

    Mirrors: ``torch._higher_order_ops.associative_scan.associative_scan``.

    Example:
        >>> import hookgrad
        >>> from hookgrad._higher_order_ops.associative_scan import associative_scan
        >>> associative_scan(lambda a, b: a + b, hookgrad.arange(5.), 0, combine_mode="generic")
        tensor([ 0.,  1.,  3.,  6., 10.])
    """
    from hookgrad._functional.rearrange import flip
    from hookgrad._functional.shape import movedim
    from hookgrad._functorch.vmap import vmap
    from hookgrad._ops._shapes import normalize_dim
    from hookgrad._tensor import Tensor
    from hookgrad.utils import _pytree as pytree

    leaves, spec = pytree.tree_flatten(xs)
    if not callable(combine_fn):
        raise ValueError(f"Combine_fn must be a callable, but got {combine_fn}")
    if not isinstance(dim, int):
        raise ValueError("Dim must be an int, but got " + str(type(dim)))
    if leaves and isinstance(leaves[0], Tensor):
        dim = normalize_dim(dim, leaves[0].ndim)
    if not isinstance(reverse, bool):
        raise RuntimeError("Reverse must be a bool, but got " + str(type(reverse)))
    if combine_mode not in ("pointwise", "generic"):
        raise ValueError(f"Combine_mode must either 'pointwise' or 'generic', but got "
                         f"{combine_mode}")
    if combine_mode == "pointwise":
        raise ValueError("For combine_mode='pointwise', all input tensors need to be on CUDA "
                         "or XPU")
    if not leaves:
        raise ValueError("Expected at least 1 xs leaf")
    if any(not isinstance(x, Tensor) for x in leaves):
        raise ValueError("xs leaves must be a Tensor")
    if any(x.ndim <= dim or x.shape[dim] == 0 for x in leaves):
        raise ValueError("All xs leaves must at least have 'dim' number of dimensions and "
                         "scan dimension > 0")
    moved = [movedim(x, dim, 0) for x in leaves]
    if reverse:
        moved = [flip(x, [0]) for x in moved]
    in_dims = pytree.tree_unflatten([0] * len(leaves), spec)
    batched = vmap(combine_fn, in_dims=(in_dims, in_dims), out_dims=0)

    def combine(lhs: list[Any], rhs: list[Any]) -> list[Any]:
        return pytree.tree_leaves(batched(pytree.tree_unflatten(lhs, spec),
                                          pytree.tree_unflatten(rhs, spec)))

    out = _tree_scan(combine, moved)
    if reverse:
        out = [flip(x, [0]) for x in out]
    return pytree.tree_unflatten([movedim(x, 0, dim) for x in out], spec)
