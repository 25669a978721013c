"""``UntypedStorage.from_file`` and byte-range slices of storages, against PyTorch
(safetensors' PyTorch loader maps a file this way and slices it per tensor)."""

from __future__ import annotations

import pytest

import hookgrad

pytestmark = pytest.mark.oracle


def _scenario(lib, path):
    with open(path, "wb") as f:
        f.write(bytes(range(16)))
    out = {}
    s = lib.UntypedStorage.from_file(str(path), shared=False, nbytes=12)
    out["private"] = [s.nbytes(), s.tolist(), s[3], s[4:8].tolist(), s[4:8].nbytes()]
    t = lib.empty(0, dtype=lib.uint8)
    t.set_(s[4:12])
    out["viewed"] = t.view(lib.int32).tolist()
    t[0] = 200  # copy-on-write: the file keeps its byte
    out["file_after_private_write"] = list(path.read_bytes()[:6])
    shared = lib.UntypedStorage.from_file(str(path), shared=True, nbytes=4)
    u = lib.empty(0, dtype=lib.uint8)
    u.set_(shared)
    u[1] = 99
    del u, shared
    out["file_after_shared_write"] = list(path.read_bytes()[:6])
    out["empty"] = lib.UntypedStorage.from_file(str(path)).nbytes()
    out["untyped_is_self"] = s.untyped() is s
    mem = lib.arange(4, dtype=lib.int32).untyped_storage()
    out["slice_shares"] = mem[4:8].data_ptr() - mem.data_ptr()
    for name, call in {"too_big": lambda: lib.UntypedStorage.from_file(str(path), False, 99),
                       "missing": lambda: lib.UntypedStorage.from_file(str(path) + "x", False, 1)}.items():
        with pytest.raises(RuntimeError) as info:
            call()
        out[name] = str(info.value).replace(str(path), "P")
    return out


def test_from_file_matches_torch(torch, tmp_path):
    assert _scenario(hookgrad, tmp_path / "h.bin") == _scenario(torch, tmp_path / "t.bin")


def _asarray(lib):
    a = lib.arange(4, dtype=lib.int32)
    s = a.untyped_storage()
    out = [lib.asarray(s, dtype=lib.uint8).tolist(), lib.asarray(s).tolist(),
           str(lib.asarray(s).dtype), lib.asarray(s, dtype=lib.int16).shape[0]]
    lib.asarray(s, dtype=lib.int32)[0] = 7  # shares the memory
    out.append(a.tolist())
    out.append(lib.arange(4.0).view(dtype=lib.int32).tolist())
    with pytest.raises(ValueError):
        lib.asarray(s, copy=False)
    return out


def test_asarray_of_a_storage_matches_torch(torch):
    assert _asarray(hookgrad) == _asarray(torch)
    a = hookgrad.arange(4)
    hookgrad.asarray(a.untyped_storage(), copy=True).add_(1)  # departure: a real copy
    assert a.tolist() == [0, 1, 2, 3]
