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
