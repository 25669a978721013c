"""The ``torch.sym_*`` helpers on plain Python numbers, and eager ``fork``/``wait``/``while_loop``.

Mirrors: ``torch.sym_int``, ``sym_float``, ``sym_max``, ``sym_min``, ``sym_not``, ``sym_ite``,
``sym_sqrt``, ``sym_sum``, ``sym_fresh_size``, ``sym_constrain_range(_for_size)``,
``torch.fork``/``torch.wait`` and ``torch.while_loop``. Outside ``torch.compile`` PyTorch's
versions act on ordinary numbers (symbolic ``SymInt`` values exist only while tracing), which is
all hookgrad has: each helper is the plain Python operation PyTorch's eager path performs.
"""

from __future__ import annotations

import builtins
import math
from typing import Any, Callable

from hookgrad.futures import Future

__all__ = ["sym_int", "sym_float", "sym_max", "sym_min", "sym_not", "sym_ite", "sym_sqrt",
           "sym_sum", "sym_fresh_size", "sym_constrain_range", "sym_constrain_range_for_size",
           "fork", "wait", "while_loop"]

_INT64_MAX = 2**63 - 1


def sym_int(a: Any) -> Any:
    """``int(a)``, truncating toward zero (``sym_int(-3.7) == -3``). Mirrors: ``torch.sym_int``."""
    return math.trunc(a) if isinstance(a, float) else int(a)


def sym_float(a: Any) -> float:
    """``float(a)``. Mirrors: ``torch.sym_float``."""
    return builtins.float(a)


def sym_max(a: Any, b: Any) -> Any:
    """The larger of `a` and `b`; a float when either is a float (``sym_max(2, 3.0) == 3.0``).

    Mirrors: ``torch.sym_max``."""
    out = builtins.max(a, b)
    return builtins.float(out) if isinstance(a, float) or isinstance(b, float) else out


def sym_min(a: Any, b: Any) -> Any:
    """The smaller of `a` and `b`; a float when either is a float. Mirrors: ``torch.sym_min``."""
    out = builtins.min(a, b)
    return builtins.float(out) if isinstance(a, float) or isinstance(b, float) else out


def sym_not(a: Any) -> bool:
    """``not a``. Mirrors: ``torch.sym_not``."""
    return not a


def sym_ite(b: Any, t: Any, f: Any) -> Any:
    """`t` if `b` else `f`; `b` must be a bool, as PyTorch asserts. Mirrors: ``torch.sym_ite``."""
    if not isinstance(b, bool):
        raise AssertionError(f"expected SymBool or bool, got {type(b)}")
    return t if b else f


def sym_sqrt(a: Any) -> float:
    """``math.sqrt(a)``. Mirrors: ``torch.sym_sqrt``."""
    return math.sqrt(a)


def sym_sum(args: Any) -> Any:
    """``sum(args)`` (PyTorch's version balances a symbolic sum; eagerly it is the sum).

    Mirrors: ``torch.sym_sum``."""
    return builtins.sum(args)


def sym_fresh_size(expr: Any) -> Any:
    """`expr` itself (a fresh unbacked size exists only while tracing).

    Mirrors: ``torch.sym_fresh_size``."""
    return expr


def sym_constrain_range(size: Any, min: int | None = None,  # noqa: A002 - torch's names
                        max: int | None = None) -> None:  # noqa: A002
    """Check ``min <= size <= max`` (unbounded where None); RuntimeError otherwise.

    Mirrors: ``torch.sym_constrain_range``."""
    lo = -_INT64_MAX - 1 if min is None else min
    hi = _INT64_MAX if max is None else max
    if not lo <= size <= hi:
        raise RuntimeError(f"Invalid value range for {size} between [{lo}, {hi}].")


def sym_constrain_range_for_size(size: Any, min: int | None = None,  # noqa: A002
                                 max: int | None = None) -> None:  # noqa: A002
    """`sym_constrain_range` with the lower bound 0 that a size has.

    Mirrors: ``torch.sym_constrain_range_for_size``."""
    sym_constrain_range(size, 0 if min is None else min, max)


def fork(func: Callable, *args: Any, **kwargs: Any) -> Future:
    """Run ``func(*args, **kwargs)`` now and return a completed `Future` of its result.

    Mirrors: ``torch.fork`` (eager TorchScript runs the task synchronously; an exception
    propagates from the call).
    """
    fut: Future = Future()
    fut.set_result(func(*args, **kwargs))
    return fut


def wait(future: Future) -> Any:
    """The result of a `fork`. Mirrors: ``torch.wait``."""
    if not isinstance(future, Future):
        raise TypeError(f"wait(): incompatible function arguments: expected a torch.Future, "
                        f"got {type(future).__name__}")
    return future.wait()


def while_loop(cond_fn: Callable, body_fn: Callable, carried_inputs: Any) -> Any:
    """Run ``body_fn`` on the carried values while ``cond_fn`` of them is true.

    Mirrors: ``torch.while_loop`` run eagerly: the result is the last ``body_fn`` output (the
    carried inputs as a tuple when the loop never runs); gradients flow through the unrolled
    iterations.
    """
    if not isinstance(carried_inputs, (tuple, list)):
        raise RuntimeError(f"carried_inputs must be a tuple or list, got {type(carried_inputs)}")
    vals: tuple = tuple(carried_inputs)
    out: Any = vals
    while bool(cond_fn(*vals)):
        out = body_fn(*vals)
        vals = tuple(out) if isinstance(out, (tuple, list)) else (out,)
    return out
