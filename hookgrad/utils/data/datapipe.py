"""The DataPipe base classes: datasets whose transforms chain as methods (``dp.name(...)``).

`functional_datapipe("name")` registers a DataPipe class so that ``source.name(*args)`` builds
``cls(source, *args)``. Only the base machinery is here: PyTorch's built-in pipes
(``datapipes.iter.Mapper`` & co, registered as ``map``, ``filter``, ...) are not provided, so
such a method is an ``AttributeError``.

Mirrors: ``torch.utils.data.datapipes.datapipe`` (`IterDataPipe`, `MapDataPipe`, `DataChunk`)
and ``torch.utils.data.datapipes._decorator.functional_datapipe``.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Iterator
from typing import Any, ClassVar

from hookgrad.utils.data.dataset import Dataset, IterableDataset

__all__ = ["IterDataPipe", "MapDataPipe", "DataChunk", "functional_datapipe"]


def _register(table: dict, function_name: str, cls_to_register: type) -> None:
    if function_name in table:
        raise Exception(  # noqa: TRY002 - PyTorch raises a bare Exception here
            f"Unable to add DataPipe function name {function_name} as it is already taken")

    def class_function(source_dp: Any, *args: Any, **kwargs: Any) -> Any:
        return cls_to_register(source_dp, *args, **kwargs)
    class_function.__doc__ = cls_to_register.__doc__
    table[function_name] = class_function


def _lookup(self: Any, table: dict, attribute_name: str) -> Any:
    if attribute_name in table:
        f = table[attribute_name]
        function = functools.partial(f, self)
        function.__doc__ = f.__doc__
        return function
    raise AttributeError(
        f"'{self.__class__.__name__}' object has no attribute '{attribute_name}")


class IterDataPipe(IterableDataset):
    """An iterable DataPipe; registered pipes are reachable as methods.

    Example:
        >>> from hookgrad.utils.data import IterDataPipe, functional_datapipe
        >>> class Source(IterDataPipe):
        ...     def __iter__(self):
        ...         return iter(range(3))
        >>> @functional_datapipe("doubled_example")
        ... class Doubled(IterDataPipe):
        ...     def __init__(self, dp):
        ...         self.dp = dp
        ...     def __iter__(self):
        ...         return (2 * x for x in self.dp)
        >>> list(Source().doubled_example())
        [0, 2, 4]

    Mirrors: ``torch.utils.data.IterDataPipe``.
    """

    functions: ClassVar[dict[str, Any]] = {}

    @classmethod
    def register_datapipe_as_function(cls, function_name: str, cls_to_register: type,
                                      enable_df_api_tracing: bool = False) -> None:
        """Make ``dp.<function_name>(*args)`` build ``cls_to_register(dp, *args)``."""
        _register(cls.functions, function_name, cls_to_register)

    def __getattr__(self, attribute_name: str) -> Any:
        return _lookup(self, IterDataPipe.functions, attribute_name)


class MapDataPipe(Dataset):
    """A map-style DataPipe; registered pipes are reachable as methods.

    Mirrors: ``torch.utils.data.MapDataPipe``.
    """

    functions: ClassVar[dict[str, Any]] = {}

    @classmethod
    def register_datapipe_as_function(cls, function_name: str, cls_to_register: type) -> None:
        """Make ``dp.<function_name>(*args)`` build ``cls_to_register(dp, *args)``."""
        _register(cls.functions, function_name, cls_to_register)

    def __getattr__(self, attribute_name: str) -> Any:
        return _lookup(self, MapDataPipe.functions, attribute_name)


class DataChunk(list):
    """A list of items batched by a DataPipe.

    Mirrors: ``torch.utils.data.DataChunk``.
    """

    def __init__(self, items: Iterable[Any]) -> None:
        items = list(items)
        super().__init__(items)
        self.items = items

    def as_str(self, indent: str = "") -> str:
        """``[a, b, ...]`` with each item's ``str``."""
        return indent + "[" + ", ".join(str(i) for i in iter(self)) + "]"

    def __iter__(self) -> Iterator[Any]:
        yield from super().__iter__()

    def raw_iterator(self) -> Iterator[Any]:
        """The items the chunk was built from."""
        yield from self.items


class functional_datapipe:  # noqa: N801 - PyTorch's name
    """Class decorator registering a DataPipe under a method name.

    Mirrors: ``torch.utils.data.functional_datapipe``.
    """

    def __init__(self, name: str, enable_df_api_tracing: bool = False) -> None:
        self.name = name
        self.enable_df_api_tracing = enable_df_api_tracing

    def __call__(self, cls: type) -> type:
        if issubclass(cls, IterDataPipe):
            IterDataPipe.register_datapipe_as_function(self.name, cls)
        elif issubclass(cls, MapDataPipe):
            MapDataPipe.register_datapipe_as_function(self.name, cls)
        return cls
