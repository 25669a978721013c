"""The DataPipe decorators: determinism guarantees and argument/output type validation.

NOTE [DataPipe type validation]
PyTorch 2.13 no longer gives DataPipes a ``.type`` (its element type): `argument_validation`
still rejects a non-DataPipe for an argument annotated with a DataPipe class, and then reads
``value.type``, which raises ``AttributeError`` for every DataPipe; `runtime_validation` reads
``self.type`` the same way unless `runtime_validation_disabled` is active. hookgrad reproduces
those outcomes (the ``AttributeError`` comes from the DataPipe's own attribute lookup).

Mirrors: ``torch.utils.data.datapipes._decorator`` (`functional_datapipe`,
`guaranteed_datapipes_determinism`, `non_deterministic`, `argument_validation`,
`runtime_validation_disabled`, `runtime_validation`).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from functools import wraps
from typing import Any, get_type_hints

from hookgrad.utils.data.datapipe import IterDataPipe, MapDataPipe, functional_datapipe

__all__ = ["functional_datapipe", "guaranteed_datapipes_determinism", "non_deterministic",
           "argument_validation", "runtime_validation_disabled", "runtime_validation"]

_flags = {"determinism": False, "runtime_validation": True}


class _FlagWhileAlive:
    """Set ``_flags[key]`` to ``value`` on creation; restore it when a ``with`` block ends."""

    key: str
    value: bool

    def __init__(self) -> None:
        self.prev = _flags[self.key]
        _flags[self.key] = self.value

    def __enter__(self) -> None:
        pass

    def __exit__(self, *exc: Any) -> None:
        _flags[self.key] = self.prev


class guaranteed_datapipes_determinism(_FlagWhileAlive):  # noqa: N801 - PyTorch's name
    """While alive (or inside ``with``), building a non-deterministic DataPipe raises TypeError.

    Mirrors: ``torch.utils.data.guaranteed_datapipes_determinism``.
    """

    key, value = "determinism", True


class non_deterministic:  # noqa: N801 - PyTorch's name
    """Mark an IterDataPipe class (or, with a predicate, some of its instances) as
    non-deterministic, so `guaranteed_datapipes_determinism` refuses to build it.

    Mirrors: ``torch.utils.data.non_deterministic``.
    """

    cls: type | None = None

    def __init__(self, arg: Any) -> None:
        if isinstance(arg, type):
            if not issubclass(arg, IterDataPipe):
                raise TypeError("Only `IterDataPipe` can be decorated with `non_deterministic`"
                                f", but {arg.__name__} is found")
            self.cls = arg
        elif callable(arg):
            self.deterministic_fn = arg
        else:
            raise TypeError(f"{arg} can not be decorated by non_deterministic")

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if self.cls is not None:
            if _flags["determinism"]:
                raise TypeError(
                    f"{self.cls.__name__} is non-deterministic, but you set "
                    "'guaranteed_datapipes_determinism'. You can turn off determinism for this "
                    "DataPipe if that is acceptable for your application")
            return self.cls(*args, **kwargs)
        if not (isinstance(args[0], type) and issubclass(args[0], IterDataPipe)):
            raise TypeError(f"Only `IterDataPipe` can be decorated, but {args[0].__name__} is "
                            "found")
        self.cls = args[0]
        return self.deterministic_wrapper_fn

    def deterministic_wrapper_fn(self, *args: Any, **kwargs: Any) -> Any:
        res = self.deterministic_fn(*args, **kwargs)
        if not isinstance(res, bool):
            raise TypeError("deterministic_fn of `non_deterministic` decorator is required to "
                            f"return a boolean value, but {type(res)} is found")
        if _flags["determinism"] and res:
            raise TypeError(
                f"{self.cls.__name__} is non-deterministic with the inputs, but you set "
                "'guaranteed_datapipes_determinism'. You can turn off determinism for this "
                "DataPipe if that is acceptable for your application")
        return self.cls(*args, **kwargs)


def _is_datapipe_class(hint: Any) -> bool:
    return isinstance(hint, type) and issubclass(hint, (IterDataPipe, MapDataPipe))


def argument_validation(f: Callable) -> Callable:
    """Check arguments annotated with a DataPipe class (NOTE [DataPipe type validation]).

    Mirrors: ``torch.utils.data.argument_validation``.
    """
    signature = inspect.signature(f)
    hints = get_type_hints(f)

    @wraps(f)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        bound = signature.bind(*args, **kwargs)
        for name, value in bound.arguments.items():
            hint = hints.get(name)
            if _is_datapipe_class(hint):
                if not isinstance(value, IterDataPipe):
                    raise TypeError(f"Expected argument '{name}' as a IterDataPipe, but found "
                                    f"{type(value)}")
                if not value.type.issubtype(getattr(hint, "type", None)):
                    raise TypeError(f"Expected type of argument '{name}' as a subtype of hint "
                                    f"{hint}, but found {value.type}")
        return f(*args, **kwargs)
    return wrapper


class runtime_validation_disabled(_FlagWhileAlive):  # noqa: N801 - PyTorch's name
    """While alive (or inside ``with``), `runtime_validation` passes items through unchecked.

    Mirrors: ``torch.utils.data.runtime_validation_disabled``.
    """

    key, value = "runtime_validation", False


def runtime_validation(f: Callable) -> Callable:
    """Decorate ``__iter__`` to check each item against the DataPipe's element type.

    Mirrors: ``torch.utils.data.runtime_validation`` (NOTE [DataPipe type validation]).
    """
    if f.__name__ != "__iter__":
        raise TypeError(f"Can not decorate function {f.__name__} with 'runtime_validation'")

    @wraps(f)
    def wrapper(self: Any) -> Any:
        if not _flags["runtime_validation"]:
            yield from f(self)
            return
        for item in f(self):
            if not self.type.issubtype_of_instance(item):
                raise RuntimeError(f"Expected an instance as subtype of {self.type}, but found "
                                   f"{item}({type(item)})")
            yield item
    return wrapper
