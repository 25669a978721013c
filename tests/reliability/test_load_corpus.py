"""Crafted and corrupted checkpoints: `hookgrad.load` raises the exception type PyTorch raises
for the fault (its zip reader's RuntimeError, its unpicklers' types, see docs/serialization.md)
with a reason, and allocates no more than the file holds."""

from __future__ import annotations

import io
import json
import pickle
import struct
import tracemalloc
import zipfile

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import hookgrad
from hookgrad.serialization import MANIFEST


def _valid() -> bytes:
    buf = io.BytesIO()
    hookgrad.save(
        {
            "w": hookgrad.arange(6.0).reshape(2, 3),
            "b": [hookgrad.ones(2), 3, "x"],
            "n": {"k": (1.5, None, True)},
        },
        buf,
    )
    return buf.getvalue()


VALID = _valid()


def _npy(arr: np.ndarray) -> bytes:
    buf = io.BytesIO()
    np.save(buf, arr, allow_pickle=False)
    return buf.getvalue()


def _archive(members: dict, compression: int = zipfile.ZIP_STORED) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=compression) as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return buf.getvalue()


def _manifest(root: dict, tensors: list) -> str:
    return json.dumps(
        {"format": "hookgrad-checkpoint", "version": 1, "tensors": tensors, "root": root}
    )


def _entry(i: int, dtype: str = "float32", shape: tuple = (4,), **extra) -> dict:
    return {"file": f"arrays/{i}.npy", "dtype": dtype, "shape": list(shape), **extra}


# the types PyTorch's readers raise for a broken file
REFUSED = (RuntimeError, pickle.UnpicklingError, EOFError, KeyError, ValueError, IndexError,
           struct.error, TypeError)


def _refused(data: bytes, match: str | None = None) -> Exception:
    with pytest.raises(REFUSED, match=match) as info:
        hookgrad.load(io.BytesIO(data))
    # hookgrad's reason, or PyTorch's own text where its weights-only unpickler refuses
    assert "hookgrad.load refused the file" in str(info.value) or \
        "Weights only load failed" in str(info.value)
    return info.value


def _npy_with_header(header: str, data: bytes = b"", version: int = 1) -> bytes:
    raw = header.encode("latin1")
    if version == 1:
        return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(raw)) + raw + data
    return b"\x93NUMPY" + bytes([version, 0]) + struct.pack("<I", len(raw)) + raw + data


# ---------------------------------------------------------------------------- crafted files
def test_valid_file_loads():
    assert hookgrad.load(io.BytesIO(VALID))["w"].tolist() == [[0, 1, 2], [3, 4, 5]]


def test_compressed_member_is_refused():
    arr = _npy(np.zeros(4, np.float32))
    data = _archive(
        {MANIFEST: _manifest({"kind": "tensor", "ref": 0}, [_entry(0)]), "arrays/0.npy": arr},
        zipfile.ZIP_DEFLATED,
    )
    _refused(data, "compressed")


def test_zip_bomb_member_is_refused_before_inflating():
    # 200 MB of zeros deflate to ~200 kB; the reader must not inflate it
    big = b"\x00" * (200 * 1024 * 1024)
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr(MANIFEST, _manifest({"kind": "none"}, []))
        zf.writestr("arrays/0.npy", big)
    del big
    tracemalloc.start()
    try:
        _refused(buf.getvalue(), "compressed")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 10 * len(buf.getvalue())


def test_unknown_compression_method_is_refused():
    data = bytearray(_archive({MANIFEST: _manifest({"kind": "none"}, [])}))
    for sig, off in ((b"PK\x03\x04", 8), (b"PK\x01\x02", 10)):  # local + central headers
        at = data.index(sig)
        data[at + off : at + off + 2] = struct.pack("<H", 99)
    _refused(bytes(data), "compress")


def test_many_entries_sharing_one_array_are_refused():
    arr = _npy(np.zeros(1000, np.float32))
    tensors = [dict(_entry(0, shape=(1000,))) for _ in range(200)]
    root = {"kind": "list", "items": [{"kind": "tensor", "ref": i} for i in range(200)]}
    _refused(
        _archive({MANIFEST: _manifest(root, tensors), "arrays/0.npy": arr}),
        "share one array member",
    )


def test_npy_header_promising_more_than_the_member_holds_is_refused():
    header = "{'descr': '<f4', 'fortran_order': False, 'shape': (40000, 100000), }"
    npy = _npy_with_header(header.ljust(118) + "\n", b"\x00" * 16)
    tracemalloc.start()
    try:
        _refused(
            _archive(
                {
                    MANIFEST: _manifest(
                        {"kind": "tensor", "ref": 0}, [_entry(0, shape=(40000, 100000))]
                    ),
                    "arrays/0.npy": npy,
                }
            ),
            "promises 16000000000 data bytes",
        )
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 1024 * 1024


@pytest.mark.parametrize(
    "header",
    [
        "{'descr': '|O', 'fortran_order': False, 'shape': (1,), }",
        "{'descr': '>f4', 'fortran_order': False, 'shape': (1,), }",
        "{'descr': '<f4', 'fortran_order': False, 'shape': (-1,), }",
        "{'descr': '<f4', 'fortran_order': 0, 'shape': (1,), }",
        "{'descr': '<f4', 'fortran_order': False, 'shape': (1,), 'extra': 1}",
        "__import__('os').system('echo pwned')",
        "[" * 30000 + "]" * 30000,
        "{'descr': '<c16', 'fortran_order': False, 'shape': (1,), }",
    ],
    ids=[
        "object",
        "big-endian",
        "negative-shape",
        "int-fortran",
        "extra-key",
        "code",
        "deep-nesting",
        "complex",
    ],
)
def test_malformed_npy_headers_are_refused(header):
    npy = _npy_with_header(header, b"\x00" * 4, version=2)
    _refused(
        _archive(
            {
                MANIFEST: _manifest({"kind": "tensor", "ref": 0}, [_entry(0, shape=(1,))]),
                "arrays/0.npy": npy,
            }
        ),
        "bad array",
    )


def test_oversized_npy_header_length_is_refused():
    npy = b"\x93NUMPY\x02\x00" + struct.pack("<I", 0xFFFFFFF0) + b"{}"
    _refused(
        _archive(
            {MANIFEST: _manifest({"kind": "tensor", "ref": 0}, [_entry(0)]), "arrays/0.npy": npy}
        ),
        "header",
    )


def test_deeply_nested_manifest_json_is_refused():
    manifest = (
        '{"format": "hookgrad-checkpoint", "version": 1, "tensors": [], "root": '
        + "[" * 200000
        + "]" * 200000
        + "}"
    )
    _refused(_archive({MANIFEST: manifest}), "nested too deeply|not valid JSON")


def test_deeply_nested_object_tree_is_refused():
    root = '{"kind": "list", "items": [' * 900 + '{"kind": "none"}' + "]}" * 900
    manifest = _manifest({"kind": "none"}, []).replace('{"kind": "none"}', root)
    _refused(_archive({MANIFEST: manifest}), "nested")


def test_member_size_beyond_the_file_is_refused():
    data = bytearray(_archive({MANIFEST: _manifest({"kind": "none"}, [])}))
    at = data.index(b"PK\x01\x02")
    data[at + 20 : at + 28] = struct.pack("<II", 2**31, 2**31)  # compressed, uncompressed size
    _refused(bytes(data))


def test_duplicate_member_names_are_refused():
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf, pytest.warns(UserWarning, match="Duplicate name"):
        zf.writestr(MANIFEST, _manifest({"kind": "none"}, []))
        zf.writestr(MANIFEST, _manifest({"kind": "int", "value": 1}, []))
    _refused(buf.getvalue(), "occurs twice")


def test_integer_tensor_claiming_requires_grad_is_refused():
    npy = _npy(np.zeros(4, np.int64))
    _refused(
        _archive(
            {
                MANIFEST: _manifest(
                    {"kind": "tensor", "ref": 0}, [_entry(0, "int64", requires_grad=True)]
                ),
                "arrays/0.npy": npy,
            }
        ),
        "require grad",
    )


@pytest.mark.parametrize(
    "data",
    [b"", b"PK", b"\x80\x02}q\x00.", b"PK\x05\x06" + b"\x00" * 18, b"PK\x03\x04" + b"\xff" * 60],
    ids=["empty", "two-bytes", "pickle", "empty-eocd", "garbage-local"],
)
def test_non_archives_are_refused(data):
    _refused(data)


def test_missing_path_is_still_file_not_found(tmp_path, torch):
    for lib in (torch, hookgrad):
        with pytest.raises(FileNotFoundError):
            lib.load(str(tmp_path / "nope.pt"))


def test_map_location_errors_are_not_disguised():
    def boom(t, where):
        raise KeyError("mine")

    with pytest.raises(KeyError, match="mine"):
        hookgrad.load(io.BytesIO(VALID), map_location=boom)


# ---------------------------------------------------------------------------- corruption
def _load_or_refuse(data: bytes) -> None:
    try:
        hookgrad.load(io.BytesIO(data))
    except REFUSED as e:  # a malformed file, or a name the allowlist refuses
        assert "hookgrad.load refused the file" in str(e) or "Weights only load failed" in str(e)


@given(st.integers(0, len(VALID) * 8 - 1))
def test_any_flipped_bit_loads_or_raises_unpickling_error(bit):
    data = bytearray(VALID)
    data[bit // 8] ^= 1 << (bit % 8)
    _load_or_refuse(bytes(data))


@given(
    st.lists(st.tuples(st.integers(0, len(VALID) - 1), st.integers(0, 255)), min_size=1, max_size=8)
)
def test_any_overwritten_bytes_load_or_raise_unpickling_error(edits):
    data = bytearray(VALID)
    for at, value in edits:
        data[at] = value
    _load_or_refuse(bytes(data))


def test_every_truncation_raises_unpickling_error():
    for n in range(len(VALID)):
        with pytest.raises(REFUSED):
            hookgrad.load(io.BytesIO(VALID[:n]))


def test_every_flipped_bit_in_array_data_is_detected():
    # data bytes are covered by the member CRC: flips there never load silently
    info = zipfile.ZipFile(io.BytesIO(VALID)).getinfo("archive/data/0")  # the "w" storage
    at = info.header_offset
    name_len, extra_len = struct.unpack("<HH", VALID[at + 26 : at + 30])
    start = info.header_offset + 30 + name_len + extra_len
    for at in range(start, start + 24):
        data = bytearray(VALID)
        data[at] ^= 0x10
        with pytest.raises(REFUSED, match="CRC|corrupt"):
            hookgrad.load(io.BytesIO(bytes(data)))
