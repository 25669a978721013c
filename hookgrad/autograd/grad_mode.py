"""Grad-mode context managers and decorators.

Mirrors: ``torch.no_grad``, ``torch.enable_grad``, ``torch.set_grad_enabled``,
``torch.inference_mode``, ``torch.is_grad_enabled``, ``torch.is_inference_mode_enabled``.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any

from hookgrad._config import STATE, set_grad_mode

from hookgrad.autograd._multithreading import set_multithreading_enabled  # noqa: E402,F401

__all__ = [
    "no_grad", "enable_grad", "set_grad_enabled", "inference_mode", "is_grad_enabled",
    "is_inference_mode_enabled", "set_multithreading_enabled",
]


def is_grad_enabled() -> bool:
    """Mirrors: ``torch.is_grad_enabled``."""
    return STATE.grad_enabled


def is_inference_mode_enabled() -> bool:
    """Mirrors: ``torch.is_inference_mode_enabled``."""
    return STATE.inference_mode


class _GradModeContext:
    """Base: a context manager that is also a decorator (functions and generators)."""

    def __call__(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        if inspect.isgeneratorfunction(fn):
            @functools.wraps(fn)
            def gen_wrapper(*args: Any, **kwargs: Any) -> Any:
                gen = fn(*args, **kwargs)
                with self.clone():
                    resp = gen.send(None)
                while True:
                    try:
                        msg = yield resp
                    except GeneratorExit:
                        with self.clone():
                            gen.close()
                        raise
                    try:
                        with self.clone():
                            resp = gen.send(msg)
                    except StopIteration as e:
                        return e.value
            return gen_wrapper

        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with self.clone():
                return fn(*args, **kwargs)
        return wrapper

    def clone(self) -> _GradModeContext:
        return self.__class__()

    def __enter__(self) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def __exit__(self, *exc: Any) -> None:  # pragma: no cover - abstract
        raise NotImplementedError


class no_grad(_GradModeContext):
    """Disable gradient recording. Mirrors: ``torch.no_grad``.

    As PyTorch's, ``no_grad(fn)`` (the decorator applied without parentheses) returns `fn`
    wrapped.
    """

    def __new__(cls, orig_func: Any = None) -> Any:
        if orig_func is None:
            return super().__new__(cls)
        return cls()(orig_func)

    def __init__(self, orig_func: Any = None) -> None:
        self.prev = False

    def __enter__(self) -> None:
        self.prev = STATE.grad_enabled
        set_grad_mode(False)

    def __exit__(self, *exc: Any) -> None:
        set_grad_mode(self.prev)


class enable_grad(_GradModeContext):
    """Enable gradient recording. Mirrors: ``torch.enable_grad`` (``enable_grad(fn)`` wraps
    `fn`, as `no_grad` does)."""

    def __new__(cls, orig_func: Any = None) -> Any:
        if orig_func is None:
            return super().__new__(cls)
        return cls()(orig_func)

    def __init__(self, orig_func: Any = None) -> None:
        self.prev = False

    def __enter__(self) -> None:
        self.prev = STATE.grad_enabled
        set_grad_mode(True)

    def __exit__(self, *exc: Any) -> None:
        set_grad_mode(self.prev)


class set_grad_enabled(_GradModeContext):
    """Set grad mode now (function form) or for a block. Mirrors: ``torch.set_grad_enabled``."""

    def __init__(self, mode: bool) -> None:
        if type(mode) is not bool:
            raise TypeError("set_grad_enabled(): argument 'enabled' (position 1) must be bool, "
                            f"not {type(mode).__name__}")
        self.prev = STATE.grad_enabled
        self.mode = mode
        set_grad_mode(self.mode)

    def __call__(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        set_grad_mode(self.prev)
        return super().__call__(fn)

    def clone(self) -> set_grad_enabled:
        return self.__class__(self.mode)

    def __enter__(self) -> None:
        pass

    def __exit__(self, *exc: Any) -> None:
        set_grad_mode(self.prev)


class inference_mode(_GradModeContext):
    """No recording and no version tracking needs. Mirrors: ``torch.inference_mode``.

    hookgrad treats it as ``no_grad`` plus the ``is_inference_mode_enabled`` flag.
    """

    def __new__(cls, mode: Any = True) -> Any:
        # ``@inference_mode`` without parentheses: `mode` is the decorated function.
        if isinstance(mode, bool):
            return super().__new__(cls)
        return cls()(mode)

    def __init__(self, mode: bool = True) -> None:
        self.mode = mode
        self.prev = (True, False)

    def clone(self) -> inference_mode:
        return self.__class__(self.mode)

    def __enter__(self) -> None:
        # Like c10::InferenceMode(enabled): entering sets grad mode to ``not enabled``, so
        # ``inference_mode(False)`` turns grad mode on.
        self.prev = (STATE.grad_enabled, STATE.inference_mode)
        set_grad_mode(not self.mode)
        STATE.inference_mode = bool(self.mode)

    def __exit__(self, *exc: Any) -> None:
        set_grad_mode(self.prev[0])
        STATE.inference_mode = self.prev[1]


class enforce_grad_layout_policy(_GradModeContext):  # noqa: N801 - PyTorch's name
    """Turn the gradient layout contract's enforcement on or off (now, or for a block).

    With ``enable=False`` a first gradient that could be stolen keeps its memory even when its
    strides differ from the parameter's (NOTE [Gradient layout contract]); a gradient that has to
    be copied is still laid out by the contract. Per thread, as PyTorch's flag.

    Mirrors: ``torch.autograd.grad_mode.enforce_grad_layout_policy``.
    """

    def __init__(self, enable: bool = True) -> None:
        self.prev = STATE.grad_layout_enforced
        STATE.grad_layout_enforced = enable
        self.mode = enable

    def __call__(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        STATE.grad_layout_enforced = self.prev
        return super().__call__(fn)

    def clone(self) -> enforce_grad_layout_policy:
        return self.__class__(self.mode)

    def __enter__(self) -> None:
        pass

    def __exit__(self, *exc: Any) -> None:
        STATE.grad_layout_enforced = self.prev


__all__ += ["enforce_grad_layout_policy"]
