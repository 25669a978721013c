"""``set_multithreading_enabled``: hookgrad's engine always runs on the calling thread.

The flag is recorded (and readable through ``torch._C._is_multithreading_enabled``) so code that
turns it off around a region runs unchanged; there are no worker threads to disable.
"""

from __future__ import annotations

from typing import Any

__all__ = ["set_multithreading_enabled", "is_multithreading_enabled"]

_ENABLED = [True]


def is_multithreading_enabled() -> bool:
    """The recorded flag (True unless inside ``set_multithreading_enabled(False)``)."""
    return _ENABLED[0]


class set_multithreading_enabled:  # noqa: N801 - PyTorch's name
    """Context manager (and decorator) setting the engine's multithreading flag.

    Mirrors: ``torch.autograd.set_multithreading_enabled``.
    """

    def __init__(self, mode: bool) -> None:
        self.prev = _ENABLED[0]
        self.mode = bool(mode)
        _ENABLED[0] = self.mode  # PyTorch sets it on construction, like set_grad_enabled

    def __enter__(self) -> None:
        pass

    def __exit__(self, *args: object) -> None:
        _ENABLED[0] = self.prev

    def __call__(self, fn: Any) -> Any:
        import functools

        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with set_multithreading_enabled(self.mode):
                return fn(*args, **kwargs)

        return wrapper

    def clone(self) -> set_multithreading_enabled:
        return self.__class__(self.mode)
