"""``torch._functorch.eager_transforms``: the autodiff transforms at their legacy path, and
``functionalize`` / ``debug_unwrap``.

Mirrors: ``torch._functorch.eager_transforms`` (grad, grad_and_value, vjp, jvp, jacrev,
jacfwd, hessian, linearize, functional_call, functionalize, debug_unwrap).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from hookgrad._functorch._autodiff import grad, grad_and_value, jvp, linearize, vjp
from hookgrad._functorch._batched import BatchedTensor
from hookgrad._functorch.functional_call import functional_call
from hookgrad._functorch.jacobians import hessian, jacfwd, jacrev
from hookgrad._tensor import Tensor

__all__ = ["grad", "grad_and_value", "vjp", "jvp", "jacrev", "jacfwd", "hessian", "linearize",
           "functional_call", "functionalize", "debug_unwrap"]

_REMOVE = (
    "functionalize(f, remove='mutations'): received invalid argument for remove={}. Valid "
    "options are:\n     remove='mutations': all inplace and out= operators will be removed "
    "from the program, and replaced with their out-of-place equivalents.\n     "
    "remove='mutations_and_views': In addition to the above, all aliasing operators {{view}} "
    "will be replaced with their non-aliasing counterparts, {{view}}_copy.\n")


def functionalize(func: Callable[..., Any], *, remove: str = "mutations") -> Callable[..., Any]:
    """`func` with mutations removed from the program it traces.

    Functionalization rewrites a *traced* program; run eagerly, the functionalized function
    returns the same values and applies the same input mutations as `func` (PyTorch copies
    the mutated inputs back at the end). hookgrad runs eagerly, so the wrapper calls `func`.

    Args:
        func: the function to wrap.
        remove: ``"mutations"`` or ``"mutations_and_views"``.

    Returns:
        The wrapped function.

    Mirrors: ``torch.func.functionalize``.
    """
    if remove not in ("mutations", "mutations_and_views"):
        raise RuntimeError(_REMOVE.format(remove))

    @functools.wraps(func)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        return func(*args, **kwargs)

    return wrapped


def debug_unwrap(tensor: Tensor, *, recurse: bool = True) -> Tensor:
    """The physical value under a vmap wrapper (all wrappers with `recurse`).

    Mirrors: ``torch.func.debug_unwrap`` (the batch dimension is always first here).
    """
    if type(tensor) is not BatchedTensor:
        return tensor
    inner = tensor._bt_value
    return debug_unwrap(inner) if recurse else inner
