"""One helper for the ``flags(...)`` context managers of the backend modules."""

from __future__ import annotations

from contextlib import contextmanager
from types import ModuleType
from typing import Any, Iterator


@contextmanager
def set_temporarily(module: ModuleType, **values: Any) -> Iterator[None]:
    """Set module attributes for the block, restoring the old values afterwards."""
    old = {k: getattr(module, k) for k in values}
    for k, v in values.items():
        setattr(module, k, v)
    try:
        yield
    finally:
        for k, v in old.items():
            setattr(module, k, v)
