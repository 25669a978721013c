"""The option getters/setters and aliases of ``torch.serialization`` against PyTorch."""

from __future__ import annotations

import mmap

import pytest

import hookgrad
from hookgrad import serialization as ours
from hookgrad._serialization import _options


def test_defaults_equal_torch(torch):
    theirs = torch.serialization
    assert ours.get_default_load_endianness() == theirs.get_default_load_endianness() is None
    assert ours.get_default_mmap_options() == theirs.get_default_mmap_options()
    assert ours.get_crc32_options() == theirs.get_crc32_options()
    assert [e.name for e in ours.LoadEndianness] == [e.name for e in theirs.LoadEndianness]
    assert [e.value for e in ours.LoadEndianness] == [e.value for e in theirs.LoadEndianness]
    assert issubclass(ours.SourceChangeWarning, Warning)
    assert ours.location_tag(hookgrad.ones(2).untyped_storage()) == \
        theirs.location_tag(torch.ones(2).untyped_storage())
    for name in ("MAP_LOCATION", "FILE_LIKE", "STORAGE"):
        assert hasattr(ours, name)


def test_setters_round_trip_and_reject_as_torch(torch):
    theirs = torch.serialization
    for lib in (ours, theirs):
        lib.set_default_load_endianness(lib.LoadEndianness.LITTLE)
        assert lib.get_default_load_endianness() is lib.LoadEndianness.LITTLE
        lib.set_default_load_endianness(None)
        lib.set_default_mmap_options(mmap.MAP_SHARED)
        assert lib.get_default_mmap_options() == mmap.MAP_SHARED
        lib.set_default_mmap_options(mmap.MAP_PRIVATE)
        with pytest.raises(ValueError):
            lib.set_default_mmap_options(12345)
        with pytest.raises(TypeError):
            lib.set_default_load_endianness("little")
        lib.set_crc32_options(False)
        assert lib.get_crc32_options() is False
        lib.set_crc32_options(True)


def test_restore_location_and_registered_packages():
    storage = hookgrad.ones(2).untyped_storage()
    assert ours.default_restore_location(storage, "cpu") is storage
    with pytest.raises(RuntimeError):
        ours.default_restore_location(storage, "tpu:3")
    seen = []
    ours.register_package(5, lambda s: None, lambda s, loc: seen.append(loc) or (s if loc == "x" else None))
    try:
        assert ours.default_restore_location(storage, "x") is storage and seen == ["x"]
    finally:
        _options._packages.clear()
    with pytest.raises(TypeError):
        ours.register_package(1, None, lambda s, loc: s)
