"""Composable function transforms: grad, grad_and_value, vjp, jvp, jacrev, jacfwd, hessian.

Mirrors: ``torch.func`` (without vmap). Transforms are built on the tape: each call makes fresh
differentiable aliases of its arguments and differentiates with ``create_graph=True`` so that
transforms nest (``jacfwd(jacrev(f))`` is forward-over-reverse through forward AD). Results are
detached at the outermost level, where no argument requires grad or carries a tangent.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from hookgrad._config import GLOBAL
from hookgrad._functional.shape import stack
from hookgrad._tensor import Tensor
from hookgrad.autograd import forward_ad as fwad
from hookgrad.autograd._api import grad as _grad
from hookgrad.autograd.forward_ad import constant_zeros_like, one_hot_like
from hookgrad.autograd.grad_mode import enable_grad

__all__ = ["grad", "grad_and_value", "vjp", "jvp", "jacrev", "jacfwd", "hessian",
           "functional_call"]


def _argnums_tuple(argnums: int | tuple, nargs: int) -> tuple[int, ...]:
    nums = (argnums,) if isinstance(argnums, int) else tuple(argnums)
    if not nums:
        raise RuntimeError("argnums must be non-empty")
    for n in nums:
        if not -nargs <= n < nargs:
            raise RuntimeError(
                f"Got argnums={n}, but only {nargs} positional inputs"
            )
    return tuple(n % nargs for n in nums)


def _alias(x: Any) -> Any:
    """A differentiable alias of `x` that keeps it connected to outer transforms."""
    if not isinstance(x, Tensor):
        raise RuntimeError(f"Expected differentiable inputs to be Tensors, got {type(x)}")
    tan = fwad.get_tangent(x, GLOBAL.dual_level) if GLOBAL.dual_level >= 0 else None
    if tan is not None:
        leaf = x.detach().requires_grad_(True)
        return fwad.make_dual(leaf, tan)
    if x.requires_grad:
        return x.view_as(x)  # type: ignore[attr-defined]
    return x.detach().requires_grad_(True)


def _is_outer(args: tuple) -> bool:
    for a in args:
        if isinstance(a, Tensor) and (
            a.requires_grad or (GLOBAL.dual_level >= 0 and fwad.get_tangent(a, GLOBAL.dual_level)
                                is not None)
        ):
            return False
    return True


def _finish(x: Any, outer: bool) -> Any:
    if isinstance(x, Tensor):
        return x.detach() if outer else x
    if isinstance(x, tuple):
        return tuple(_finish(e, outer) for e in x)
    if isinstance(x, list):
        return [_finish(e, outer) for e in x]
    if isinstance(x, dict):
        return {k: _finish(v, outer) for k, v in x.items()}
    return x


def _call_with_aliases(func: Callable[..., Any], args: tuple, nums: tuple) -> tuple:
    new_args = list(args)
    for n in nums:
        new_args[n] = _alias(args[n])
    return func(*new_args), tuple(new_args[n] for n in nums)


def grad_and_value(func: Callable[..., Any], argnums: int | tuple = 0,
                   has_aux: bool = False) -> Callable[..., Any]:
    """``f -> (args -> (grad, value))``. Mirrors: ``torch.func.grad_and_value``."""

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        nums = _argnums_tuple(argnums, len(args))
        outer = _is_outer(args)
        with enable_grad():
            out, diff = _call_with_aliases(lambda *a: func(*a, **kwargs), args, nums)
            aux = None
            if has_aux:
                if not (isinstance(out, tuple) and len(out) == 2):
                    raise RuntimeError(
                        "grad_and_value(f)(*args): output of function f should be a tuple: "
                        "(output, aux) if has_aux is True"
                    )
                out, aux = out
            if not isinstance(out, Tensor) or out.dim() != 0:
                raise RuntimeError(
                    "grad_and_value(f)(*args): Expected f(*args) to return a scalar Tensor, got "
                    f"tensor with {out.dim() if isinstance(out, Tensor) else 'no'} dims. Maybe "
                    "you wanted to use the vjp or jacrev APIs instead?"
                )
            gs = _grad(out, diff, create_graph=True, allow_unused=True, materialize_grads=True)
        g = gs[0] if isinstance(argnums, int) else tuple(gs)
        value = out if aux is None else (out, aux)
        return _finish(g, outer), _finish(value, outer)

    return wrapper


def grad(func: Callable[..., Any], argnums: int | tuple = 0,
         has_aux: bool = False) -> Callable[..., Any]:
    """``f -> (args -> grad)``. Mirrors: ``torch.func.grad``."""
    gv = grad_and_value(func, argnums, has_aux)

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        g, value = gv(*args, **kwargs)
        return (g, value[1]) if has_aux else g

    return wrapper


def vjp(func: Callable[..., Any], *primals: Any, has_aux: bool = False) -> tuple:
    """``(func(*primals), vjp_fn)``. Mirrors: ``torch.func.vjp``."""
    outer = _is_outer(primals)
    with enable_grad():
        diff = tuple(_alias(p) for p in primals)
        out = func(*diff)
    aux = None
    if has_aux:
        out, aux = out

    def vjp_fn(cotangents: Any, retain_graph: bool = True) -> tuple:
        outs = out if isinstance(out, tuple) else (out,)
        cots = cotangents if isinstance(cotangents, tuple) else (cotangents,)
        with enable_grad():
            gs = _grad(outs, diff, cots, retain_graph=True, create_graph=True,
                       allow_unused=True, materialize_grads=True)
        return _finish(tuple(gs), outer)

    result = (_finish(out, outer), vjp_fn)
    return result + (_finish(aux, outer),) if has_aux else result


def jvp(func: Callable[..., Any], primals: tuple, tangents: tuple, *, strict: bool = False,
        has_aux: bool = False) -> tuple:
    """``(func(*primals), J @ tangents)`` by forward AD. Mirrors: ``torch.func.jvp``."""
    if not isinstance(primals, tuple) or not isinstance(tangents, tuple):
        raise RuntimeError("jvp(f, primals, tangents): Expected primals and tangents to be tuples")
    if len(primals) != len(tangents):
        raise RuntimeError(
            "jvp(f, primals, tangents): Expected primals and tangents to have the same length"
        )
    with fwad.dual_level():
        duals = tuple(fwad.make_dual(p, t) for p, t in zip(primals, tangents))
        out = func(*duals)
        aux = None
        if has_aux:
            out, aux = out
        outs = out if isinstance(out, tuple) else (out,)
        prims, tans = [], []
        for o in outs:
            p, t = fwad.unpack_dual(o)
            prims.append(p.detach() if not p.requires_grad else p)
            tans.append(t if t is not None else constant_zeros_like(o))
    if isinstance(out, tuple):
        res = (tuple(prims), tuple(tans))
    else:
        res = (prims[0], tans[0])
    return res + (aux,) if has_aux else res


def _stack(parts: list, dim: int) -> Tensor:
    return stack(parts, dim)


def jacrev(func: Callable[..., Any], argnums: int | tuple = 0,
           has_aux: bool = False) -> Callable[..., Any]:
    """Jacobian by reverse mode, one output element at a time. Mirrors: ``torch.func.jacrev``."""

    def wrapper(*args: Any) -> Any:
        nums = _argnums_tuple(argnums, len(args))
        outer = _is_outer(args)
        with enable_grad():
            out, diff = _call_with_aliases(func, args, nums)
            aux = None
            if has_aux:
                out, aux = out
            rows: list[list] = [[] for _ in diff]
            for j in range(out.numel()):
                onehot = one_hot_like(out, j)
                gs = _grad(out, diff, onehot, retain_graph=True, create_graph=True,
                           allow_unused=True, materialize_grads=True)
                for k, g in enumerate(gs):
                    rows[k].append(g)
            jacs = tuple(
                _stack(r, 0).reshape(*(tuple(out.shape) + tuple(d.shape)))  # type: ignore[attr-defined]
                for r, d in zip(rows, diff)
            )
        res = jacs[0] if isinstance(argnums, int) else jacs
        res = _finish(res, outer)
        return (res, _finish(aux, outer)) if has_aux else res

    return wrapper


def jacfwd(func: Callable[..., Any], argnums: int | tuple = 0,
           has_aux: bool = False) -> Callable[..., Any]:
    """Jacobian by forward AD, one input element at a time. Mirrors: ``torch.func.jacfwd``."""

    def wrapper(*args: Any) -> Any:
        nums = _argnums_tuple(argnums, len(args))
        jacs = []
        aux = None
        for n in nums:
            x = args[n]
            cols = []
            out_shape: tuple = ()
            for j in range(x.numel()):
                basis = one_hot_like(x, j)
                with fwad.dual_level():
                    new_args = list(args)
                    new_args[n] = fwad.make_dual(x, basis)
                    out = func(*new_args)
                    if has_aux:
                        out, aux = out
                    p, t = fwad.unpack_dual(out)
                    out_shape = tuple(out.shape)
                    cols.append(t if t is not None else constant_zeros_like(out))
            jac = _stack(cols, -1) if cols else None
            jacs.append(jac.reshape(*(out_shape + tuple(x.shape))))  # type: ignore[union-attr]
        res = jacs[0] if isinstance(argnums, int) else tuple(jacs)
        return (res, aux) if has_aux else res

    return wrapper


def hessian(func: Callable[..., Any], argnums: int | tuple = 0) -> Callable[..., Any]:
    """``jacfwd(jacrev(func))``. Mirrors: ``torch.func.hessian``."""
    return jacfwd(jacrev(func, argnums), argnums)


def functional_call(module: Any, parameter_and_buffer_dicts: Any, args: Any = (),
                    kwargs: dict | None = None, *, tie_weights: bool = True,
                    strict: bool = False) -> Any:
    """Call `module` with some parameters/buffers swapped in. Mirrors: ``torch.func.functional_call``."""
    dicts = parameter_and_buffer_dicts
    if isinstance(dicts, (list, tuple)):
        merged: dict = {}
        for d in dicts:
            merged.update(d)
        dicts = merged
    args = args if isinstance(args, tuple) else (args,)
    restore = []
    try:
        for name, value in dicts.items():
            owner, attr = _resolve(module, name)
            restore.append((owner, attr) + _swap(owner, attr, value))
        return module(*args, **(kwargs or {}))
    finally:
        for owner, attr, table, old in reversed(restore):
            _put(owner, attr, table, old)


def _resolve(module: Any, name: str) -> tuple:
    *path, attr = name.split(".")
    owner = module
    for p in path:
        owner = getattr(owner, p)
    return owner, attr


def _swap(owner: Any, attr: str, value: Any) -> tuple:
    """Put `value` where ``owner.attr`` lives; return ``(table, old value)`` for restoring."""
    for table in ("_parameters", "_buffers"):
        d = owner.__dict__.get(table)
        if d is not None and attr in d:
            old = d[attr]
            d[attr] = value
            return table, old
    old = getattr(owner, attr, None)
    object.__setattr__(owner, attr, value)
    return None, old


def _put(owner: Any, attr: str, table: str | None, value: Any) -> None:
    if table is None:
        object.__setattr__(owner, attr, value)
    else:
        owner.__dict__[table][attr] = value
