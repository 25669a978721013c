"""``torch.overrides``: the ``__torch_function__`` protocol helpers tools call.

hookgrad tensors do not implement ``__torch_function__`` (subclasses are not dispatched through
it), so `has_torch_function` is always False and code that checks it takes its plain path.

Mirrors: ``torch.overrides`` (the query helpers).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from hookgrad.autograd._torch_function import (
    handle_torch_function,
    has_torch_function,
    has_torch_function_unary,
    has_torch_function_variadic,
    is_tensor_like,
)

__all__ = ["has_torch_function", "has_torch_function_unary", "has_torch_function_variadic",
           "is_tensor_like", "handle_torch_function", "wrap_torch_function"]


def wrap_torch_function(dispatcher: Callable[..., Any]) -> Callable[..., Any]:
    """Decorator routing `func` through `handle_torch_function` when an argument overrides it.

    Mirrors: ``torch.overrides.wrap_torch_function``.
    """
    def inner(func: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(func)
        def wrapped(*args: Any, **kwargs: Any) -> Any:
            relevant = dispatcher(*args, **kwargs)
            if has_torch_function(relevant):
                return handle_torch_function(wrapped, relevant, *args, **kwargs)
            return func(*args, **kwargs)
        return wrapped
    return inner


# torch function modes (Lightning's init contexts subclass TorchFunctionMode; issue 21)
from hookgrad._function_mode import (  # noqa: E402
    BaseTorchFunctionMode,
    TorchFunctionMode,
    _get_current_function_mode,
    _get_current_function_mode_stack,
    _len_torch_function_stack,
)

__all__ += ["TorchFunctionMode", "BaseTorchFunctionMode"]


# The override tables and the dispatch helpers built on them (NOTE [Override tables]).
import contextlib  # noqa: E402
import importlib  # noqa: E402
from collections.abc import Iterator  # noqa: E402

from hookgrad import _function_mode  # noqa: E402
from hookgrad.utils import _python_dispatch  # noqa: E402
from hookgrad._overrides_tables import (  # noqa: E402
    ignored_functions,
    overridable_functions,
    testing_overrides,
)


def get_ignored_functions() -> set[Callable]:
    """Public functions that cannot be overridden by ``__torch_function__`` (they take no tensor).

    Mirrors: ``torch.overrides.get_ignored_functions`` (PyTorch's names, hookgrad's objects).
    """
    return set(ignored_functions())


def get_overridable_functions() -> dict[Any, list[Callable]]:
    """Namespace (module, or `Tensor`; a property for its getter) -> its overridable functions.

    Mirrors: ``torch.overrides.get_overridable_functions``.
    """
    return {k: list(v) for k, v in overridable_functions()[0].items()}


def get_testing_overrides() -> dict[Callable, Callable]:
    """Every overridable function -> a dummy with its signature that returns -1.

    Mirrors: ``torch.overrides.get_testing_overrides``.
    """
    return testing_overrides()


def get_default_nowrap_functions() -> set[Callable]:
    """Accessors whose result the default ``Tensor.__torch_function__`` returns unwrapped.

    Mirrors: ``torch.overrides.get_default_nowrap_functions`` (``Tensor.grad``'s getter; hookgrad
    keeps ``_base`` and ``_grad`` as plain attributes, so they have no getter to list).
    """
    tensor = importlib.import_module("hookgrad").Tensor
    return {d.__get__ for d in (vars(tensor).get(n) for n in ("_base", "grad", "_grad"))
            if isinstance(d, property)}


def _tensor_methods() -> set[Callable]:
    tensor = importlib.import_module("hookgrad").Tensor
    return set(overridable_functions()[0].get(tensor, ()))


def _seen_as(func: Callable) -> tuple[Any, str, Callable] | None:
    """(owner, name, original) when `func` is the dispatching stand-in a mode reports."""
    for owner, name, original in list(_function_mode._INSTALLED):
        if vars(owner).get(name) is func:
            return owner, name, original
    return None


def is_tensor_method_or_property(func: Callable) -> bool:
    """Whether `func` is a `Tensor` method or a property getter, as ``__torch_function__`` sees it.

    Mirrors: ``torch.overrides.is_tensor_method_or_property``. A function a `TorchFunctionMode`
    reports is answered exactly (``Tensor.add`` and ``torch.add`` are reported as different
    objects); outside a mode, hookgrad shares one object between ``torch.add`` and
    ``Tensor.add`` (and ~240 others), which counts as a method.
    """
    seen = _seen_as(func)
    if seen is not None:
        return isinstance(seen[0], type)
    return func in _tensor_methods() or func.__name__ == "__get__"


def resolve_name(f: Callable) -> str | None:
    """The dotted PyTorch name of a function handed to ``__torch_function__`` (None if unknown).

    Mirrors: ``torch.overrides.resolve_name``. A function shared by several namespaces (hookgrad's
    ``nn.functional.relu`` is ``torch.relu``) resolves to the first of PyTorch's walk order.
    """
    seen = _seen_as(f)
    if seen is not None:
        owner, name, _ = seen
        path = "torch.Tensor" if isinstance(owner, type) else owner.__name__.replace(
            "hookgrad", "torch", 1)
        return f"{path}.{name}"
    return overridable_functions()[1].get(f)


def redispatch_function(func: Callable, types: Any, args: tuple, kwargs: Any) -> Any:
    """Call `func` skipping one hop of ``__torch_function__`` dispatch.

    The call itself goes to the implementation (no mode sees it); the calls it makes inside are
    dispatched as usual, so a mode that re-enters itself (``with self:``) sees them.

    Mirrors: ``torch.overrides.redispatch_function``.
    """
    kwargs = kwargs or {}
    seen = _seen_as(func)
    return (seen[2] if seen is not None else func)(*args, **kwargs)


@contextlib.contextmanager
def enable_reentrant_dispatch() -> Iterator[None]:
    """Inside a ``__torch_dispatch__`` handler: let the calls of the block see the dispatch state.

    PyTorch restores a C++ snapshot of its Python dispatch state here; hookgrad keeps that state
    in Python, where a reentrant call always sees it, so the block runs as it is. Outside a
    handler there is no such state, and PyTorch's RuntimeError is raised.

    Mirrors: ``torch.overrides.enable_reentrant_dispatch``.
    """
    if not _python_dispatch._frames():
        raise RuntimeError("Accessing torch dispatch state outside of '__torch_dispatch__' is "
                           "not allowed.")
    yield


__all__ += ["get_ignored_functions", "get_overridable_functions", "get_testing_overrides",
            "get_default_nowrap_functions", "is_tensor_method_or_property", "resolve_name",
            "redispatch_function", "enable_reentrant_dispatch"]
