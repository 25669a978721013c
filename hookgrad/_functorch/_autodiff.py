"""grad, grad_and_value, vjp, jvp, linearize (jacobians.py builds jacrev/jacfwd on them).

Mirrors: ``torch.func`` (``eager_transforms`` is the legacy path). Reverse transforms run on the
tape: each call makes fresh differentiable aliases of its arguments and differentiates with
``create_graph=True`` so that transforms nest; results are detached at the outermost level
(where no argument requires grad or carries a tangent). ``jacrev`` is ``vmap`` over ``vjp``
and ``jacfwd`` is ``vmap`` over ``jvp``, as in PyTorch, so a Jacobian is one batched pass.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from hookgrad._config import GLOBAL
from hookgrad._functorch._batched import wrap
from hookgrad._functorch.pytree_util import tree_flatten, tree_unflatten
from hookgrad._tensor import Tensor
from hookgrad.autograd import _tensor_api
from hookgrad.autograd import forward_ad as fwad
from hookgrad.autograd._api import grad as _grad
from hookgrad.autograd.grad_mode import enable_grad

__all__ = ["grad", "grad_and_value", "vjp", "jvp", "linearize"]


def _argnums_tuple(argnums: Any, nargs: int, who: str) -> tuple[int, ...]:
    if isinstance(argnums, int) and not isinstance(argnums, bool):
        nums: tuple = (argnums,)
    elif isinstance(argnums, tuple) and all(isinstance(n, int) for n in argnums):
        nums = argnums
    else:
        raise RuntimeError(f"{who}: Expected argnums to be int or tuple of ints, got: "
                           f"{type(argnums)}")
    if not nums:
        raise RuntimeError(f"{who}: 'argnums' must be non-empty")
    for n in nums:
        if not -nargs <= n < nargs:
            raise RuntimeError(f"{who}: Got argnums={n}, but only {nargs} positional inputs")
    normed = tuple(n % nargs for n in nums)
    if len(set(normed)) != len(normed):
        raise RuntimeError(f"{who}: argnums must be unique, got {argnums}")
    return normed


def _tangents(x: Tensor) -> dict:
    """The forward-AD tangents of `x` at every open level (jvp levels nest)."""
    return fwad.tangents_of(x) if GLOBAL.dual_level >= 0 else {}


def _alias(x: Any, who: str) -> Any:
    """A differentiable alias of `x` that keeps it connected to outer transforms."""
    if not isinstance(x, Tensor):
        raise RuntimeError(f"{who}: Expected f(*args) to be called with Tensor inputs to "
                           f"differentiate, got {type(x)}")
    if not (x.is_floating_point() or x.is_complex()):
        raise RuntimeError("only Tensors of floating point dtype can require gradients")
    if x.requires_grad:  # the view carries x's tangents too (forward AD records it)
        return x.view_as(x)  # type: ignore[attr-defined]
    phys = getattr(x, "_bt_value", None)
    if phys is not None:  # a logical leaf whose physical value stays watched by outer levels
        leaf = wrap(phys, x._bt_level)
        leaf._requires_grad = True
    else:
        leaf = x.detach().requires_grad_(True)
    for level, tan in _tangents(x).items():  # outermost first, each dual a view of the last
        leaf = fwad.make_dual(leaf, tan, level=level)
    return leaf


_local = threading.local()


@contextmanager
def _inside(forward: bool | None = False) -> Iterator[None]:
    """Marks the call of a transformed function: transforms started in it are not outermost
    (they may differentiate tensors the function closes over). `forward`: a jvp's; None: the
    jvp of ``linearize``, which tensor hooks see through (PyTorch traces it with plain forward
    AD, no functorch level: a hook registered in it belongs to the transform outside)."""
    _local.depth = getattr(_local, "depth", 0) + 1
    kinds = _local.__dict__.setdefault("forward", [])
    kinds.append(forward)
    try:
        yield
    finally:
        _local.depth -= 1
        kinds.pop()


def _scope_hook(hook: Any) -> Any:
    """NOTE [Tensor hooks under transforms]: in functorch a tensor made inside ``grad(f)`` is
    a wrapper of that transform's level, and a hook registered on it runs in that level's
    backward pass only; ``grad(grad(f))``'s outer pass differentiates the inner pass's graph
    without calling it again. hookgrad has one tape, so the hook remembers the transform it
    was registered in and lets the gradient through untouched in another transform's pass
    (a plain ``autograd.grad``/``backward`` runs every hook)."""
    level = getattr(_local, "depth", 0)
    while level and _local.forward[level - 1] is None:  # linearize's jvp: see through it
        level -= 1
    if not level:
        return hook
    if _local.forward[level - 1]:  # the innermost transform is forward-mode: nothing requires grad
        raise RuntimeError(_tensor_api._NO_GRAD_HOOK)

    def scoped(grad: Any) -> Any:
        running = getattr(_local, "pass_level", None)
        return hook(grad) if running is None or running == level else None

    return scoped


@contextmanager
def _pass(level: int) -> Iterator[None]:
    """The backward pass of the transform at depth `level` is running."""
    old = getattr(_local, "pass_level", None)
    _local.pass_level = level
    try:
        yield
    finally:
        _local.pass_level = old


_tensor_api.HOOK_SCOPE[0] = _scope_hook


def in_transformed_call() -> bool:
    """Whether this thread is running a function under ``grad``/``vjp``/``jvp`` (any depth)."""
    return getattr(_local, "depth", 0) > 0


def _is_outer(leaves: list) -> bool:
    """No enclosing transform and no argument watched by one (vmap levels are looked through)."""
    if getattr(_local, "depth", 0):
        return False
    return not any(_watched(a) for a in leaves)


def _watched(a: Any) -> bool:
    """`a` requires grad or carries a tangent, itself or its physical value under vmap."""
    while isinstance(a, Tensor):
        if a.requires_grad or _tangents(a):
            return True
        a = getattr(a, "_bt_value", None)
    return False


def _finish(x: Any, outer: bool) -> Any:
    if not outer:
        return x
    leaves, spec = tree_flatten(x)
    return tree_unflatten([e.detach() if isinstance(e, Tensor) else e for e in leaves], spec)


def _diff_args(args: tuple, nums: tuple, who: str) -> tuple[list, list, list]:
    """(new args, flat differentiable leaves, their specs per argnum)."""
    new = list(args)
    leaves, specs = [], []
    for n in nums:
        flat, spec = tree_flatten(args[n])
        al = [_alias(x, who) for x in flat]
        new[n] = tree_unflatten(al, spec)
        leaves.extend(al)
        specs.append((spec, len(al)))
    return new, leaves, specs


def _reverse(outs: list, diff: list, cots: Any, create_graph: bool, level: int) -> tuple:
    """Gradients of `outs` w.r.t. `diff`; outputs that do not depend on any input (no graph:
    a constant, a detached value) contribute zeros, as functorch's transforms give."""
    pairs = [(o, c) for o, c in zip(outs, cots if cots is not None else [None] * len(outs))
             if o.requires_grad]
    if not pairs:
        from hookgrad._functional.creation import zeros_like

        return tuple(zeros_like(x) for x in diff)
    with _pass(level):
        return _grad([o for o, _ in pairs], diff,
                     None if cots is None else [c for _, c in pairs], retain_graph=True,
                     create_graph=create_graph, allow_unused=True, materialize_grads=True)


def _regroup(flat: list, specs: list, single: bool) -> Any:
    out, i = [], 0
    for spec, n in specs:
        out.append(tree_unflatten(list(flat[i:i + n]), spec))
        i += n
    return out[0] if single else tuple(out)


def grad_and_value(func: Callable[..., Any], argnums: Any = 0,
                   has_aux: bool = False) -> Callable[..., Any]:
    """``f -> (args -> (grad, value))``. Mirrors: ``torch.func.grad_and_value``."""
    who = "grad_and_value(f)(*args)"

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        nums = _argnums_tuple(argnums, len(args), who)
        outer = _is_outer(tree_flatten(args)[0])
        level = getattr(_local, "depth", 0) + 1  # the depth its function runs at
        with enable_grad():
            new, diff, specs = _diff_args(args, nums, who)
            with _inside():
                out = func(*new, **kwargs)
            aux = None
            if has_aux:
                if not (isinstance(out, tuple) and len(out) == 2):
                    raise RuntimeError(f"{who}: output of function f should be a tuple: "
                                       "(output, aux) if has_aux is True")
                out, aux = out
            if not isinstance(out, Tensor):
                raise RuntimeError(f"{who}: Expected f(*args) to return a Tensor, got "
                                   f"{type(out)}")
            if out.dim() != 0:
                raise RuntimeError(
                    f"{who}: Expected f(*args) to return a scalar Tensor, got tensor with "
                    f"{out.dim()} dims. Maybe you wanted to use the vjp or jacrev APIs instead?")
            gs = _reverse([out], diff, None, not outer, level)  # outermost: no backward graph
        g = _regroup(list(gs), specs, isinstance(argnums, int))
        value = out if not has_aux else (out, aux)
        return _finish(g, outer), _finish(value, outer)

    return wrapper


def grad(func: Callable[..., Any], argnums: Any = 0, has_aux: bool = False) -> Callable[..., Any]:
    """``f -> (args -> grad)``. Mirrors: ``torch.func.grad``."""
    gv = grad_and_value(func, argnums, has_aux)

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        g, value = gv(*args, **kwargs)
        return (g, value[1]) if has_aux else g

    return wrapper


def vjp(func: Callable[..., Any], *primals: Any, has_aux: bool = False) -> tuple:
    """``(func(*primals), vjp_fn)``. Mirrors: ``torch.func.vjp``."""
    who = "vjp(f, *primals)"
    outer = _is_outer(tree_flatten(primals)[0])
    level = getattr(_local, "depth", 0) + 1
    with enable_grad():
        new, diff, specs = _diff_args(primals, tuple(range(len(primals))), who)
        with _inside():
            out = func(*new)
        aux = None
        if has_aux:
            if not (isinstance(out, tuple) and len(out) == 2):
                raise RuntimeError("vjp(f, *primals): output of function f should be a tuple: "
                                   "(output, aux) if has_aux is True")
            out, aux = out
    outs, out_spec = tree_flatten(out)
    for o in outs:
        if not isinstance(o, Tensor):
            raise RuntimeError(f"{who}: Expected f to be a function that has non-empty output "
                               f"(got output = {out}) and outputs of type Tensor")
        if not (o.is_floating_point() or o.is_complex()):
            raise RuntimeError("vjp(f, ...): All outputs of f must be floating-point or complex "
                               f"Tensors, got Tensor with dtype {o.dtype}")

    def vjp_fn(cotangents: Any, retain_graph: bool = True, create_graph: bool = True) -> tuple:
        cots, cot_spec = tree_flatten(cotangents)
        if cot_spec != out_spec:
            raise RuntimeError("Expected pytree structure of cotangents to be the same as "
                               f"pytree structure of outputs to the function. cotangents: "
                               f"{cot_spec}, primal output: {out_spec}")
        with enable_grad():
            gs = _reverse(outs, diff, cots, not outer, level)
        return _finish(_regroup(list(gs), specs, False), outer)

    result = (_finish(out, outer), vjp_fn)
    return result + (_finish(aux, outer),) if has_aux else result


def jvp(func: Callable[..., Any], primals: Any, tangents: Any, *, strict: bool = False,
        has_aux: bool = False) -> tuple:
    """``(func(*primals), J @ tangents)`` by forward AD. Mirrors: ``torch.func.jvp``."""
    return _jvp(func, primals, tangents, has_aux, True)


def _jvp(func: Callable[..., Any], primals: Any, tangents: Any, has_aux: bool,
         kind: bool | None) -> tuple:
    if not isinstance(primals, tuple) or not isinstance(tangents, tuple):
        raise RuntimeError("jvp(f, primals, tangents): Expected primals to be a tuple. E.g. it "
                           "should be valid to call f(*primals).")
    flat_p, pspec = tree_flatten(primals)
    flat_t, tspec = tree_flatten(tangents)
    if pspec != tspec:
        raise RuntimeError("jvp(f, primals, tangents): Expected primals and tangents to have "
                           f"the same python structure. For example, if primals is a tuple of "
                           f"3 tensors, tangents also must be. Got primals with structure "
                           f"{pspec} and tangents with structure {tspec}")
    outer = _is_outer(flat_p) and _is_outer(flat_t)
    with fwad.nested_level():
        duals = [fwad.make_dual(p, t) for p, t in zip(flat_p, flat_t)]
        with _inside(forward=kind):
            out = func(*tree_unflatten(duals, pspec))
        aux = None
        if has_aux:
            out, aux = out
        outs, ospec = tree_flatten(out)
        prims, tans = [], []
        for o in outs:
            p, t = fwad.unpack_dual(o)
            prims.append(p if _watched(p) else p.detach())
            tans.append(t if t is not None else o.new_zeros(tuple(o.shape)))  # type: ignore
    res = (tree_unflatten(prims, ospec), _finish(tree_unflatten(tans, ospec), outer))
    return res + (aux,) if has_aux else res


def linearize(func: Callable[..., Any], *primals: Any) -> tuple:
    """``(func(*primals), jvp_fn)``. Mirrors: ``torch.func.linearize`` (recomputes per call).

    PyTorch computes the output, then traces one jvp of `func` (which runs it once more:
    random draws, hooks), then runs the trace per call; hookgrad runs that jvp once here too,
    so the random stream and the hook calls are PyTorch's."""
    from hookgrad._functional.creation import zeros_like

    out = func(*primals)
    flat, spec = tree_flatten(primals)
    _jvp(func, primals, tree_unflatten([zeros_like(p) for p in flat], spec), False, None)

    def jvp_fn(*tangents: Any) -> Any:
        return _jvp(func, primals, tangents, False, None)[1]

    return out, jvp_fn
