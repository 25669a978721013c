"""`TorchFunctionMode`: see, and change, every call of a public torch function in a block.

Mirrors: ``torch.overrides.TorchFunctionMode``. While a mode is entered, a call of a public
function of the ``hookgrad``, ``nn.functional``, ``nn.init``, ``linalg``, ``special`` and
``fft`` namespaces, or of a `Tensor` method or operator, goes to the innermost mode's
``__torch_function__(func, types, args, kwargs)`` instead; the mode and those entered after it
are off while its handler runs, so ``func(*args, **kwargs)`` there reaches the next mode out, or
the function itself. Operators are reported as the method PyTorch names (``x + 1`` as
``Tensor.add``), and ``func`` is the object the namespace holds (``func is torch.add``).

hookgrad tensors have no ``__torch_function__`` slot, so the interception is installed only
while some mode is entered, by replacing those attributes with dispatching wrappers, and taken
out when the last mode exits: code that enters no mode pays nothing. The stack of modes is per
thread, as PyTorch's. Departures: property reads (``x.shape``, ``x.grad``) are not reported,
and ``types`` is the tuple of tensor subclasses among the arguments.

Example:
    >>> import hookgrad as torch
    >>> class Log(TorchFunctionMode):
    ...     def __torch_function__(self, func, types, args=(), kwargs=None):
    ...         print(func.__name__)
    ...         return func(*args, **(kwargs or {}))
    >>> with Log():
    ...     y = torch.ones(2) + 1
    ones
    add
"""

from __future__ import annotations

import functools
import sys
import threading
import types as _types
from typing import Any

__all__ = ["TorchFunctionMode", "BaseTorchFunctionMode", "DisableTorchFunction",
           "DisableTorchFunctionSubclass", "_get_current_function_mode",
           "_get_current_function_mode_stack", "_len_torch_function_stack"]

_NAMESPACES = ("hookgrad", "hookgrad.nn.functional", "hookgrad.nn.init", "hookgrad.linalg",
               "hookgrad.special", "hookgrad.fft")
# Tensor operators PyTorch reports as the named method (x + 1 is seen as Tensor.add)
_OPERATORS = {
    "__add__": "add", "__radd__": "add", "__iadd__": "add_", "__sub__": "sub",
    "__isub__": "sub_", "__mul__": "mul", "__rmul__": "mul", "__imul__": "mul_",
    "__truediv__": "div", "__itruediv__": "div_", "__matmul__": "matmul", "__neg__": "neg",
    "__pow__": "pow", "__abs__": "abs", "__lt__": "lt", "__le__": "le", "__gt__": "gt",
    "__ge__": "ge", "__and__": "__and__", "__or__": "__or__", "__invert__": "bitwise_not",
    "__eq__": "__eq__", "__ne__": "__ne__", "__getitem__": "__getitem__",
    "__setitem__": "__setitem__", "__rsub__": "__rsub__", "__rtruediv__": "__rdiv__",
    "__rpow__": "__rpow__", "__rmatmul__": "__rmatmul__", "__floordiv__": "__floordiv__",
    "__mod__": "remainder", "__len__": "__len__",
}
_STATE = threading.local()
_LOCK = threading.Lock()
_INSTALLED: list[tuple[Any, str, Any]] = []  # (owner, name, original) while any mode is entered
_ENTERED = [0]


def _stack() -> list:
    stack = getattr(_STATE, "stack", None)
    if stack is None:
        stack = _STATE.stack = []
    return stack


def _tensor_types(args: tuple, kwargs: dict) -> tuple:
    tensor = sys.modules["hookgrad"].Tensor
    found: list = []
    for a in (*args, *kwargs.values()):
        t = type(a)
        if isinstance(a, tensor) and t is not tensor and t not in found:
            found.append(t)
    return tuple(found)


def _dispatching(original: Any, public: list, name: str, owner: str) -> Any:
    """A wrapper that sends the call to the innermost mode (`public[0]` is what it reports),
    named as the attribute it replaces (PyTorch's name, whatever hookgrad calls its function)."""

    @functools.wraps(original)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        stack = _stack()
        if not stack or getattr(_STATE, "disabled", 0):
            return original(*args, **kwargs)
        mode = stack.pop()
        try:
            return mode.__torch_function__(public[0], _tensor_types(args, kwargs), args, kwargs)
        finally:
            stack.append(mode)

    wrapper.__name__, wrapper.__qualname__ = name, f"{owner}.{name}" if owner else name
    public.append(wrapper)
    return wrapper


def _is_function(obj: Any) -> bool:
    return isinstance(obj, (_types.FunctionType, _types.BuiltinFunctionType,
                            functools.partial, _types.MethodWrapperType))


def _install() -> None:
    wrapped: dict[int, Any] = {}
    for mod_name in _NAMESPACES:
        mod = sys.modules.get(mod_name)
        for name, obj in list(vars(mod).items()) if mod is not None else ():
            if name.startswith("_") or not _is_function(obj):
                continue
            if id(obj) not in wrapped:
                # PyTorch's own name: ``torch.special.expit.__name__`` is "special_expit"
                own = obj.__name__ if isinstance(obj, _types.FunctionType) else name
                wrapped[id(obj)] = _dispatching(obj, [], own, "")
                wrapped[id(obj)].__module__ = mod_name
            _INSTALLED.append((mod, name, obj))
            setattr(mod, name, wrapped[id(obj)])
    _install_methods()


def _install_methods() -> None:
    tensor = sys.modules["hookgrad"].Tensor
    methods: dict[str, Any] = {}
    for name, obj in list(vars(tensor).items()):
        if name.startswith("_") and name not in _OPERATORS or not callable(obj):
            continue
        if isinstance(obj, (type, staticmethod, classmethod, property)):
            continue
        reported: list = []
        wrapper = _dispatching(obj, reported, name, "Tensor")
        methods[name] = reported
        _INSTALLED.append((tensor, name, obj))
        setattr(tensor, name, wrapper)
    for name, target in _OPERATORS.items():
        if name in methods and target in methods and target != name:
            methods[name][0] = methods[target][0]  # report x + 1 as Tensor.add


def _uninstall() -> None:
    while _INSTALLED:
        owner, name, original = _INSTALLED.pop()
        setattr(owner, name, original)


class TorchFunctionMode:
    """Base class of modes that intercept public torch function calls (see module docstring).

    Subclasses define ``__torch_function__(self, func, types, args=(), kwargs=None)``; entering
    the mode (``with``) pushes it on this thread's stack, leaving pops it.

    Mirrors: ``torch.overrides.TorchFunctionMode``.
    """

    inner: Any

    def __init__(self) -> None:
        pass

    def __torch_function__(self, func: Any, types: Any, args: tuple = (),
                           kwargs: dict | None = None) -> Any:
        raise NotImplementedError

    def __enter__(self) -> TorchFunctionMode:
        with _LOCK:
            if _ENTERED[0] == 0:
                _install()
            _ENTERED[0] += 1
        _stack().append(self)
        return self

    def __exit__(self, exc_type: Any, exc_val: Any, exc_tb: Any) -> None:
        stack = _stack()
        if stack and stack[-1] is self:
            stack.pop()
        elif self in stack:
            stack.remove(self)
        with _LOCK:
            _ENTERED[0] -= 1
            if _ENTERED[0] == 0:
                _uninstall()

    @classmethod
    def push(cls, *args: Any, **kwargs: Any) -> TorchFunctionMode:
        """A new mode of this class (deprecated in PyTorch: use ``with cls(...)``)."""
        return cls(*args, **kwargs)


class BaseTorchFunctionMode(TorchFunctionMode):
    """A mode whose handler just calls the function.

    Mirrors: ``torch.overrides.BaseTorchFunctionMode``.
    """

    def __torch_function__(self, func: Any, types: Any, args: tuple = (),
                           kwargs: dict | None = None) -> Any:
        return func(*args, **(kwargs or {}))


def _get_current_function_mode() -> TorchFunctionMode | None:
    """The innermost active mode. Mirrors: ``torch.overrides._get_current_function_mode``."""
    stack = _stack()
    return stack[-1] if stack else None


def _get_current_function_mode_stack() -> list:
    """Active modes, outermost first. Mirrors: ``_get_current_function_mode_stack``."""
    return list(_stack())


def _len_torch_function_stack() -> int:
    """How many modes are active. Mirrors: ``torch._C._len_torch_function_stack``."""
    return len(_stack())


class DisableTorchFunction:
    """Context manager: no mode sees the calls made in its block (this thread only).

    Mirrors: ``torch._C.DisableTorchFunction`` (which also turns off subclass dispatch; hookgrad
    tensor subclasses are never dispatched through ``__torch_function__`` anyway).
    """

    def __enter__(self) -> None:
        _STATE.disabled = getattr(_STATE, "disabled", 0) + 1

    def __exit__(self, exc_type: Any, exc_val: Any, exc_tb: Any) -> None:
        _STATE.disabled -= 1


class DisableTorchFunctionSubclass:
    """Context manager turning off ``__torch_function__`` dispatch on tensor subclasses; modes
    stay on. hookgrad never dispatches on subclasses, so entering it changes nothing.

    Mirrors: ``torch._C.DisableTorchFunctionSubclass``.
    """

    def __enter__(self) -> None:
        _STATE.subclass_off = getattr(_STATE, "subclass_off", 0) + 1

    def __exit__(self, exc_type: Any, exc_val: Any, exc_tb: Any) -> None:
        _STATE.subclass_off -= 1


def _is_torch_function_enabled() -> bool:
    """False inside either context manager above (this thread).

    Mirrors: ``torch._C._is_torch_function_enabled``.
    """
    return not (getattr(_STATE, "disabled", 0) or getattr(_STATE, "subclass_off", 0))
