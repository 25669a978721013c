"""What traced code and generated code share: `wrap`'s registry, the `PH` marker, and the
assertions that check specialised arguments (``concrete_args``) at run time."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

__all__ = ["wrap", "PH", "PHBase"]

# (id(globals), name) -> globals: the functions registered with `wrap`.
_wrapped_fns_to_patch: dict[tuple[int, str], dict[str, Any]] = {}


class PHBase:
    """A placeholder marker usable inside ``concrete_args``.

    Mirrors: ``torch.fx._symbolic_trace.PHBase``.
    """

    def __repr__(self) -> str:
        return "PH"


PH = PHBase()


def _assert(condition: Any, message: str) -> None:
    """Raise AssertionError(`message`) unless `condition` (checks of specialised arguments)."""
    if not condition:
        raise AssertionError(message)


def _assert_is_none(value: Any, msg: str) -> None:
    """Raise AssertionError(`msg`) unless `value` is None (an argument specialised to None)."""
    if value is not None:
        raise AssertionError(msg)


def wrap(fn_or_name: str | Callable[..., Any]) -> str | Callable[..., Any]:
    """Make a module-level function a leaf: traced calls record it as one ``call_function``.

    Must be called at the top level of the module that defines (or imports) the function.

    Raises:
        NotImplementedError: when called inside a function.
        RuntimeError: for a callable without a name.

    Mirrors: ``torch.fx.wrap``.
    """
    if not callable(fn_or_name) and not isinstance(fn_or_name, str):
        raise AssertionError("Unsupported type for global function! Must be either a callable "
                             "or string name")
    if callable(fn_or_name):
        if isinstance(fn_or_name, str):
            raise AssertionError("a callable is expected")
        fn_name = fn_or_name.__name__
    else:
        fn_name = fn_or_name
    caller = inspect.currentframe().f_back  # type: ignore[union-attr]
    if caller is None or caller.f_code.co_name != "<module>":
        raise NotImplementedError("wrap must be called at the top level of a module")
    _wrapped_fns_to_patch[(id(caller.f_globals), fn_name)] = caller.f_globals
    return fn_or_name
