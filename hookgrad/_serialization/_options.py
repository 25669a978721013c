"""Process-wide serialization options and the type aliases of ``torch.serialization``.

Mirrors the option getters/setters of ``torch.serialization`` (load endianness, mmap flags,
CRC32 on save) and its public aliases (``MAP_LOCATION``, ``FILE_LIKE``, ``STORAGE``), which
libraries import for annotations. The options are recorded as PyTorch records them; hookgrad's
reader honours endianness through its storage decoding and always checks CRC32 on read.
"""

from __future__ import annotations

import enum
import mmap as _mmap
import os
from typing import IO, Any, Callable, Union

FILE_LIKE = Union[str, os.PathLike, IO[bytes]]
FileLike = FILE_LIKE
MAP_LOCATION = Union[Callable[[Any, str], Any], Any, str, dict, None]
STORAGE = Any


class LoadEndianness(enum.Enum):
    """Mirrors ``torch.serialization.LoadEndianness``: byte order assumed for legacy files."""

    NATIVE = 1
    LITTLE = 2
    BIG = 3


class SourceChangeWarning(Warning):
    """Mirrors ``torch.serialization.SourceChangeWarning``."""


_state: dict[str, Any] = {"endianness": None, "mmap_flags": _mmap.MAP_PRIVATE, "crc32": True}


def get_default_load_endianness() -> LoadEndianness | None:
    """Mirrors ``torch.serialization.get_default_load_endianness`` (None until set)."""
    return _state["endianness"]


def set_default_load_endianness(endianness: LoadEndianness | None) -> None:
    """Mirrors ``torch.serialization.set_default_load_endianness``."""
    if endianness is not None and not isinstance(endianness, LoadEndianness):
        raise TypeError("Invalid argument type in function set_default_load_endianness")
    _state["endianness"] = endianness


def get_default_mmap_options() -> int:
    """Mirrors ``torch.serialization.get_default_mmap_options`` (``mmap.MAP_PRIVATE``)."""
    return _state["mmap_flags"]


def set_default_mmap_options(flags: int) -> None:
    """Mirrors ``torch.serialization.set_default_mmap_options`` (MAP_PRIVATE or MAP_SHARED)."""
    if flags not in (_mmap.MAP_PRIVATE, _mmap.MAP_SHARED):
        raise ValueError(
            "Invalid argument in function set_default_mmap_options, expected mmap.MAP_PRIVATE "
            f"or mmap.MAP_SHARED, but got {flags}")
    _state["mmap_flags"] = flags


def get_crc32_options() -> bool:
    """Mirrors ``torch.serialization.get_crc32_options``."""
    return _state["crc32"]


def set_crc32_options(compute_crc32: bool) -> None:
    """Mirrors ``torch.serialization.set_crc32_options``."""
    _state["crc32"] = bool(compute_crc32)


_packages: list[tuple[int, Callable, Callable]] = []


def register_package(priority: int, tagger: Callable, deserializer: Callable) -> None:
    """Mirrors ``torch.serialization.register_package``: a location tagger/deserializer pair.

    Kept in priority order; `location_tag` and `default_restore_location` consult them first.
    """
    if not callable(tagger):
        raise TypeError(f"tagger must be callable but got {type(tagger)}")
    if not callable(deserializer):
        raise TypeError(f"deserializer must be callable but got {type(deserializer)}")
    _packages.append((priority, tagger, deserializer))
    _packages.sort(key=lambda entry: entry[0])


def location_tag(storage: Any) -> str:
    """Mirrors ``torch.serialization.location_tag``: ``"cpu"`` for hookgrad's storages."""
    for _, tagger, _ in _packages:
        tag = tagger(storage)
        if tag:
            return tag
    device = getattr(storage, "device", None)
    if device is None or getattr(device, "type", "cpu") == "cpu":
        return "cpu"
    if getattr(device, "type", None) == "meta":
        return "meta"
    raise RuntimeError(f"don't know how to determine data location of {type(storage).__name__}")


def default_restore_location(storage: Any, location: str) -> Any:
    """Mirrors ``torch.serialization.default_restore_location``."""
    for _, _, deserializer in _packages:
        result = deserializer(storage, location)
        if result is not None:
            return result
    if location == "cpu" or location.startswith("cpu:"):
        return storage
    raise RuntimeError(
        "don't know how to restore data location of "
        f"{type(storage).__name__} (tagged with {location})")


def normalize_storage_type(storage_type: type) -> type:
    """Mirrors ``torch.serialization.normalize_storage_type`` (the type itself on CPU)."""
    return storage_type
