"""``torch.jit`` names that tools import, with honest eager semantics.

hookgrad has no TorchScript compiler: `script` and `trace` return the callable they are given,
unchanged (so hooks registered on a module keep firing, as eager PyTorch would run them), and
`is_scripting`/`is_tracing` are always False. Code that guards TorchScript-only paths with them
therefore takes its eager path. `ScriptModule` exists so ``isinstance(m, torch.jit.ScriptModule)``
checks (torchinfo, captum) work; nothing hookgrad returns is an instance of it.

Example:
    >>> import hookgrad as torch
    >>> lin = torch.nn.Linear(2, 2)
    >>> torch.jit.script(lin) is lin, torch.jit.is_scripting()
    (True, False)

Mirrors: ``torch.jit``.
"""

from __future__ import annotations

import builtins
from collections.abc import Callable
from typing import Any, TypeVar

from hookgrad import _jit_runtime
from hookgrad._jit_runtime import (  # noqa: F401 - re-exported: torch.jit's names
    Attribute, Error, Future, ScriptWarning, TracerWarning, TracingCheckError, _fork,
    _unwrap_optional, _wait, enable_onednn_fusion, freeze, fuser, isinstance, load,
    onednn_fusion_enabled, optimize_for_inference, optimized_execution, save,
    script_if_tracing, set_fusion_strategy, strict_fusion)
from hookgrad.nn.modules.module import Module

__all__ = [
    "ScriptModule", "RecursiveScriptModule", "ScriptFunction", "script", "trace", "trace_module", "is_scripting",
    "is_tracing", "ignore", "unused", "export", "annotate", "Final", "interface",
    *_jit_runtime.__all__,
]

F = TypeVar("F")


class ScriptModule(Module):
    """The TorchScript module class (no hookgrad object is one; see module docstring).

    Mirrors: ``torch.jit.ScriptModule``.
    """


class RecursiveScriptModule(ScriptModule):
    """A compiled TorchScript module's class (never instantiated here; ``isinstance`` checks).

    Mirrors: ``torch.jit.RecursiveScriptModule``.
    """


class ScriptFunction:
    """The TorchScript function class (no hookgrad object is one; see module docstring).

    Mirrors: ``torch.jit.ScriptFunction``.
    """


def script(obj: F, optimize: Any = None, _frames_up: int = 0, _rcb: Any = None,
           example_inputs: Any = None) -> F:
    """Return `obj` unchanged: hookgrad runs everything eagerly.

    Mirrors: ``torch.jit.script`` (without compilation; documented in this module).
    """
    return obj


def trace(func: F, example_inputs: Any = None, *args: Any, **kwargs: Any) -> F:
    """Return `func` unchanged (no graph is recorded; `example_inputs` are not run).

    Mirrors: ``torch.jit.trace`` (without tracing; documented in this module).
    """
    return func


def _get_trace_graph(f: Any, args: Any = (), kwargs: Any = None, *rest: Any, **kw: Any) -> Any:
    """Raise: there is no TorchScript IR graph to return (torchprofile walks one).

    Mirrors: ``torch.jit._get_trace_graph``, which returns ``(torch._C.Graph, outputs)``; a
    tracing failure is a RuntimeError in PyTorch, and so is this.
    """
    raise RuntimeError(
        "torch.jit._get_trace_graph: hookgrad has no TorchScript tracer or IR graph to return; "
        "to count operations, use torch.utils.flop_counter.FlopCounterMode or a "
        "TorchDispatchMode, which see every op")


def trace_module(mod: F, inputs: Any = None, *args: Any, **kwargs: Any) -> F:
    """Return `mod` unchanged. Mirrors: ``torch.jit.trace_module``."""
    return mod


def is_scripting() -> bool:
    """Always False: hookgrad never compiles TorchScript. Mirrors: ``torch.jit.is_scripting``."""
    return False


def is_tracing() -> bool:
    """Always False: `trace` does not trace. Mirrors: ``torch.jit.is_tracing``."""
    return False


def _marker(drop: Any = False, **kwargs: Any) -> Any:
    # Both ``@ignore`` and ``@ignore(drop=True)`` spellings; the function is returned as is.
    if callable(drop):
        return drop

    def decorate(fn: Callable) -> Callable:
        return fn

    return decorate


def ignore(drop: Any = False, **kwargs: Any) -> Any:
    """Decorator leaving the function as is (there is no compiler to hide it from).

    Mirrors: ``torch.jit.ignore``.
    """
    return _marker(drop, **kwargs)


def unused(fn: F) -> F:
    """Decorator returning `fn` unchanged. Mirrors: ``torch.jit.unused``."""
    return fn


def export(fn: F) -> F:
    """Decorator returning `fn` unchanged. Mirrors: ``torch.jit.export``."""
    return fn


def annotate(the_type: Any, the_value: Any) -> Any:
    """Return `the_value` (a type hint for the TorchScript compiler). Mirrors: ``torch.jit.annotate``."""
    return the_value


try:  # ``torch.jit.Final`` is typing's Final
    from typing import Final
except ImportError:  # pragma: no cover - Python < 3.8
    Final = Any  # type: ignore[assignment]


def interface(obj: Any) -> Any:
    """Decorator declaring a TorchScript interface type; returns `obj` unchanged (hookgrad has
    no TorchScript compiler, and eager code uses the class as is).

    Mirrors: ``torch.jit.interface``.
    """
    return obj


_overloaded_fns: dict[str, list[Callable[..., Any]]] = {}
_overloaded_methods: dict[str, dict[str, list[Callable[..., Any]]]] = {}


def _check_overload_body(func: Callable[..., Any]) -> None:
    """An overload declaration's body must be ``pass`` or ``...`` (TorchScript's rule)."""
    import ast
    import inspect
    import textwrap
    import warnings
    try:
        source = textwrap.dedent(inspect.getsource(func))
    except (OSError, TypeError):
        warnings.warn(f"Unable to retrieve source for @torch.jit._overload function: {func}.",
                      stacklevel=3)
        return
    body = ast.parse(source).body[0].body  # type: ignore[attr-defined]
    only = body[0] if len(body) == 1 else None
    is_ellipsis = (builtins.isinstance(only, ast.Expr)
                   and builtins.isinstance(only.value, ast.Constant)
                   and only.value.value is Ellipsis)
    if not (builtins.isinstance(only, ast.Pass) or is_ellipsis):
        raise RuntimeError("Only `pass` statement or `...` can be the body of overload "
                           "declaration:\n" + "\n".join(source.split("\n")[:3])
                           + " <- Expecting `pass` or `...` here!")


def _overload(func: F) -> F:
    """Declare one typed signature of a function for TorchScript; eager code keeps `func`.

    Mirrors: ``torch.jit._overload``.
    """
    _check_overload_body(func)  # type: ignore[arg-type]
    name = f"{func.__module__}.{func.__qualname__}"  # type: ignore[attr-defined]
    _overloaded_fns.setdefault(name, []).append(func)  # type: ignore[arg-type]
    return func


def _overload_method(func: F) -> F:
    """Declare one typed signature of a method for TorchScript; eager code keeps `func`.

    Mirrors: ``torch.jit._overload_method``.
    """
    _check_overload_body(func)  # type: ignore[arg-type]
    owner, _, name = func.__qualname__.rpartition(".")  # type: ignore[attr-defined]
    _overloaded_methods.setdefault(f"{func.__module__}.{owner}", {}).setdefault(
        name, []).append(func)  # type: ignore[arg-type]
    return func

# PyTorch's ``__all__`` also lists these
__all__ += ["fork", "wait"]
