"""jacrev, jacfwd, hessian: ``vmap`` over ``vjp`` / ``jvp`` with one-hot bases.

Mirrors: ``torch.func.jacrev``, ``torch.func.jacfwd``, ``torch.func.hessian``. All outputs (for
jacrev) or all differentiated inputs (for jacfwd) are flattened into one vector whose one-hot
basis is mapped in a single vmap (in `chunk_size` pieces when given); the result is split back
into an output-structure of argument-structures of ``(*out_shape, *in_shape)`` tensors.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from hookgrad._functional.shape import cat
from hookgrad._functorch._autodiff import (
    _argnums_tuple, _finish, _is_outer, _regroup, jvp, vjp,
)
from hookgrad._functorch.pytree_util import tree_flatten, tree_unflatten
from hookgrad._functorch.vmap import vmap
from hookgrad._tensor import Tensor

__all__ = ["jacrev", "jacfwd", "hessian"]


def _eye(n: int, like: Tensor) -> Tensor:
    from hookgrad._functional.creation import eye

    return eye(n, dtype=like.dtype)


def _check_chunk(chunk_size: Any, who: str) -> None:
    if chunk_size is not None and (not isinstance(chunk_size, int) or chunk_size <= 0):
        raise ValueError(f"{who}: `chunk_size` should be greater than 0.")


def _mapped(fn: Callable[..., Any], basis: Tensor, chunk: Any) -> list:
    """`fn` vmapped over the rows of `basis` (flat list of results, rows first)."""
    if chunk is None or chunk >= basis.shape[0]:
        return tree_flatten(vmap(fn)(basis))[0]
    parts = [tree_flatten(vmap(fn)(basis[i:i + chunk]))[0]
             for i in range(0, basis.shape[0], chunk)]
    return [cat([p[k] for p in parts], 0) for k in range(len(parts[0]))]


def _split_args(args: tuple, nums: tuple) -> tuple[list, list]:
    leaves, specs = [], []
    for n in nums:
        flat, spec = tree_flatten(args[n])
        leaves.extend(flat)
        specs.append((spec, len(flat)))
    return leaves, specs


def jacrev(func: Callable[..., Any], argnums: Any = 0, *, has_aux: bool = False,
           chunk_size: int | None = None,
           _preallocate_and_copy: bool = False) -> Callable[..., Any]:
    """Jacobian by reverse mode. Mirrors: ``torch.func.jacrev``."""
    _check_chunk(chunk_size, "jacrev")

    def wrapper(*args: Any) -> Any:
        nums = _argnums_tuple(argnums, len(args), "jacrev(f, ...)(*args)")

        def diff_fn(*diff_args: Any) -> Any:
            full = list(args)
            for n, a in zip(nums, diff_args):
                full[n] = a
            return func(*full)

        res = vjp(diff_fn, *(args[n] for n in nums), has_aux=has_aux)
        out, vjp_fn = res[0], res[1]
        outs, ospec = tree_flatten(out)
        sizes = [o.numel() for o in outs]
        total = sum(sizes)
        basis = _eye(total, outs[0])

        def row(v: Tensor) -> Any:
            if len(outs) == 1:  # one output: the basis row is the cotangent (no slicing)
                o = outs[0]
                return vjp_fn(tree_unflatten([v if o.dim() == 1 else v.reshape(
                    tuple(o.shape))], ospec))
            cots, start = [], 0
            for o, n in zip(outs, sizes):
                cots.append(v[start:start + n].reshape(tuple(o.shape)))
                start += n
            return vjp_fn(tree_unflatten(cots, ospec))

        flat_in, specs = _split_args(args, nums)
        grads = _mapped(row, basis, chunk_size)  # each (total, *in_shape)
        per_out, start = [], 0
        for o, n in zip(outs, sizes):
            piece = [(g if len(outs) == 1 else g[start:start + n]).reshape(
                tuple(o.shape) + tuple(x.shape))
                     for g, x in zip(grads, flat_in)]
            per_out.append(_regroup(piece, specs, isinstance(argnums, int)))
            start += n
        jac = tree_unflatten(per_out, ospec)
        return (jac, res[2]) if has_aux else jac

    return wrapper


def jacfwd(func: Callable[..., Any], argnums: Any = 0, has_aux: bool = False, *,
           randomness: str = "error") -> Callable[..., Any]:
    """Jacobian by forward mode. Mirrors: ``torch.func.jacfwd``."""

    def wrapper(*args: Any) -> Any:
        nums = _argnums_tuple(argnums, len(args), "jacfwd(f, ...)(*args)")
        flat_in, specs = _split_args(args, nums)
        sizes = [x.numel() for x in flat_in]
        basis = _eye(sum(sizes), flat_in[0])
        primals = tuple(args[n] for n in nums)

        def column(v: Tensor) -> Any:
            tans, start = [], 0
            for x, n in zip(flat_in, sizes):
                tans.append(v[start:start + n].reshape(tuple(x.shape)))
                start += n
            tangents = tuple(_regroup(tans, specs, False))

            def diff_fn(*diff_args: Any) -> Any:
                full = list(args)
                for n, a in zip(nums, diff_args):
                    full[n] = a
                return func(*full)

            res = jvp(diff_fn, primals, tangents, has_aux=has_aux)
            # the primal output is not returned: under randomness="different" it is batched
            return (res[1],) + ((res[2],) if has_aux else ())

        out_all = vmap(column, randomness=randomness)(basis)
        touts, ospec = tree_flatten(out_all[0])
        per_out = []
        for t in touts:  # (total_in, *out_shape) -> per input (*out_shape, *in_shape)
            oshape = tuple(t.shape[1:])
            moved = t.movedim(0, -1) if t.dim() > 1 else t
            piece, start = [], 0
            for x, n in zip(flat_in, sizes):
                piece.append(moved[..., start:start + n].reshape(oshape + tuple(x.shape)))
                start += n
            per_out.append(_regroup(piece, specs, isinstance(argnums, int)))
        jac = _finish(tree_unflatten(per_out, ospec), _is_outer(tree_flatten(args)[0]))
        if not has_aux:
            return jac
        aux, aspec = tree_flatten(out_all[1])  # batched over the basis: the first row, as PyTorch
        return jac, tree_unflatten([a[0] for a in aux], aspec)

    return wrapper


def hessian(func: Callable[..., Any], argnums: Any = 0) -> Callable[..., Any]:
    """``jacfwd(jacrev(func))``. Mirrors: ``torch.func.hessian``."""
    return jacfwd(jacrev(func, argnums), argnums)
