"""Hostile and broken files: typed errors, no code run, no hang, memory bounded by the file.

Long mode: ``HOOKGRAD_SERIALIZATION_FUZZ=<n>`` runs `n` random mutations (default 300).
"""

from __future__ import annotations

import io
import os
import pickle
import random
import signal
import struct
import tracemalloc
import zipfile

import pytest

import hookgrad
from hookgrad import serialization
from hookgrad._serialization import _files
from tests.serialization._helpers import loaded, saved

# The types PyTorch's readers raise for a broken file (its zip reader's RuntimeError, its
# unpicklers' types): hookgrad raises the one PyTorch raises for the same fault.
Refused = (RuntimeError, pickle.UnpicklingError, EOFError, KeyError, ValueError, IndexError,
           struct.error, TypeError)


def _valid() -> bytes:
    w = hookgrad.arange(12.0).reshape(3, 4)
    return saved(hookgrad, {"w": w, "v": w[1:, ::2], "b": [hookgrad.ones(2), 3, "x"]})


VALID = _valid()


@pytest.fixture
def deadline():
    """Fail (instead of hanging the suite) when a load takes more than 20 s."""
    def boom(*_):
        raise TimeoutError("load hung")

    old = signal.signal(signal.SIGALRM, boom)
    signal.alarm(20)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, old)


def _member_offset(data: bytes, name: str) -> int:
    info = zipfile.ZipFile(io.BytesIO(data)).getinfo(name)
    at = info.header_offset
    name_len, extra_len = struct.unpack("<HH", data[at + 26:at + 30])
    return at + 30 + name_len + extra_len


def _rezip(data: bytes, replace: dict, compression: int = zipfile.ZIP_STORED) -> bytes:
    src = zipfile.ZipFile(io.BytesIO(data))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", compression) as zf:
        for name in src.namelist():
            zf.writestr(name, replace.get(name.split("/", 1)[1], src.read(name)))
    return out.getvalue()


# ------------------------------------------------------------------------- special files
@pytest.mark.parametrize("target", ["/dev/zero", "/dev/urandom", "/dev/null"])
def test_symlink_to_a_device_is_refused_at_once(tmp_path, deadline, target):
    if not os.path.exists(target):
        pytest.skip(f"no {target}")
    link = tmp_path / "ckpt.pt"
    link.symlink_to(target)
    for path in (link, target):
        with pytest.raises(Refused, match="character device"):
            hookgrad.load(path)
    with open(target, "rb") as fh, pytest.raises(Refused, match="character device"):
        hookgrad.load(fh)


@pytest.mark.oracle
@pytest.mark.parametrize("target", ["/dev/zero", "/dev/null"])
@pytest.mark.parametrize("kwargs", [{}, {"weights_only": False}, {"mmap": True}],
                         ids=["weights_only", "full", "mmap"])
def test_devices_raise_torchs_type_after_one_byte(tmp_path, torch, deadline, target, kwargs):
    if not os.path.exists(target):
        pytest.skip(f"no {target}")
    link = tmp_path / "ckpt.pt"
    link.symlink_to(target)
    with pytest.raises(Exception) as theirs:
        torch.load(target, **kwargs)
    for path in (link, target):
        with pytest.raises(Refused, match="character device") as mine:
            hookgrad.load(path, **kwargs)
        assert type(mine.value) is type(theirs.value)


def test_fifo_path_is_refused_without_blocking(tmp_path, deadline):
    fifo = tmp_path / "pipe.pt"
    os.mkfifo(fifo)
    with pytest.raises(EOFError, match="FIFO"):  # nothing to read: what an empty file gives
        hookgrad.load(fifo)
    with pytest.raises(RuntimeError, match="FIFO"):  # mmap of what is not a zip file
        hookgrad.load(fifo, mmap=True)


def test_fifo_with_a_writer_is_refused_without_reading_it(tmp_path, deadline):
    fifo = tmp_path / "pipe.pt"
    os.mkfifo(fifo)
    reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)  # lets the writer open at once
    writer = os.open(fifo, os.O_WRONLY)
    try:
        os.write(writer, VALID[:4096])  # a writer that never closes: reading would block
        with pytest.raises(pickle.UnpicklingError, match="FIFO"):
            hookgrad.load(fifo)
    finally:
        os.close(writer)
        os.close(reader)


def test_socket_path_is_refused_without_blocking(tmp_path, deadline):
    import socket

    path = str(tmp_path / "sock.pt")
    if len(path) > 100:
        pytest.skip("socket path too long for AF_UNIX")
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        server.bind(path)
        server.listen(1)
        with pytest.raises((OSError, EOFError), match="socket|No such device"):
            hookgrad.load(path)
    finally:
        server.close()


def test_directory_and_missing_paths_raise_oserror_as_torch(tmp_path):
    with pytest.raises(IsADirectoryError):
        hookgrad.load(tmp_path)
    with pytest.raises(FileNotFoundError):
        hookgrad.load(tmp_path / "missing.pt")


def test_endless_stream_is_refused_at_the_bound(monkeypatch, deadline):
    class Zeros(io.RawIOBase):
        def readable(self):
            return True

        def readinto(self, b):
            b[:] = bytes(len(b))
            return len(b)

    monkeypatch.setattr(_files, "MAX_STREAM_BYTES", 8 << 20)
    with pytest.raises(Refused, match="endless"):
        hookgrad.load(Zeros())


def test_pipe_streams_are_read(deadline):
    r, w = os.pipe()
    os.write(w, VALID)
    os.close(w)
    with os.fdopen(r, "rb") as fh:
        assert hookgrad.load(fh)["b"][1] == 3


# ------------------------------------------------------------------------- zip-level damage
def _set_flag(data: bytes, bit: int) -> bytes:
    """`data` with flag bit(s) `bit` (a 16-bit mask) set in every local and central header."""
    d = bytearray(data)
    for sig, off in ((b"PK\x03\x04", 6), (b"PK\x01\x02", 8)):
        at = d.find(sig)
        while at >= 0:
            (flags,) = struct.unpack("<H", d[at + off:at + off + 2])
            d[at + off:at + off + 2] = struct.pack("<H", flags | bit)
            at = d.find(sig, at + 4)
    return bytes(d)


@pytest.mark.oracle
def test_encrypted_members_raise_torchs_type(torch):
    data = _set_flag(VALID, 0x1)
    with pytest.raises(Refused, match="encrypted") as info:
        loaded(hookgrad, data)
    with pytest.raises(Exception) as theirs:
        loaded(torch, data)
    assert type(info.value) is type(theirs.value)  # RuntimeError, as torch's reader


@pytest.mark.parametrize("bit", range(16))
def test_every_zip_flag_bit_loads_or_raises_a_typed_error(bit, deadline):
    data = _set_flag(VALID, 1 << bit)
    try:
        out = loaded(hookgrad, data)
    except Refused as e:
        if bit in (0, 6, 13):
            assert "encrypted" in str(e)
    else:
        assert bit not in (0, 6, 13) and out["w"].shape == (3, 4)


@pytest.mark.oracle
@pytest.mark.parametrize("bit", range(16))
def test_every_zip_flag_bit_gives_torchs_outcome(torch, bit, deadline):
    data = saved(torch, {"w": torch.arange(12.0).reshape(3, 4)})
    flagged = _set_flag(data, 1 << bit)

    def outcome(lib):
        try:
            return ("loaded", loaded(lib, flagged)["w"].tolist())
        except Exception as e:  # noqa: BLE001 - the type is what is compared
            return (type(e).__name__, None)

    assert outcome(hookgrad) == outcome(torch)


def test_every_truncation_is_refused():
    for n in range(len(VALID)):
        with pytest.raises(Refused):
            loaded(hookgrad, VALID[:n])


def test_flipped_storage_bytes_fail_the_crc():
    start = _member_offset(VALID, "archive/data/0")
    for at in range(start, start + 48, 3):
        data = bytearray(VALID)
        data[at] ^= 0x04
        with pytest.raises(Refused, match="CRC|corrupt"):
            loaded(hookgrad, bytes(data))


def test_random_mutations_load_or_raise_typed_errors(deadline):
    rng = random.Random(0)
    n = int(os.environ.get("HOOKGRAD_SERIALIZATION_FUZZ", "300"))
    pkl_at = _member_offset(VALID, "archive/data.pkl")
    for _ in range(n):
        data = bytearray(VALID)
        for _ in range(rng.randint(1, 4)):
            at = rng.randrange(pkl_at, pkl_at + 400) if rng.random() < 0.7 else \
                rng.randrange(len(data))
            data[at] = rng.randrange(256)
        try:
            loaded(hookgrad, bytes(data))
        except Refused:
            pass


def test_zip_bomb_is_refused_before_inflating():
    bomb = io.BytesIO()
    with zipfile.ZipFile(bomb, "w", zipfile.ZIP_DEFLATED) as zf:
        src = zipfile.ZipFile(io.BytesIO(VALID))
        for name in src.namelist():
            zf.writestr(name, src.read(name))
        zf.writestr("archive/data/9", b"\x00" * (64 << 20))
    tracemalloc.start()
    try:
        with pytest.raises(Refused, match="zip bomb"):
            loaded(hookgrad, bomb.getvalue())
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 20 * len(bomb.getvalue())


@pytest.mark.oracle
def test_deflated_archives_load_as_in_torch(torch):
    data = _rezip(VALID, {}, zipfile.ZIP_DEFLATED)
    assert loaded(torch, data)["w"].tolist() == loaded(hookgrad, data)["w"].tolist()


# ------------------------------------------------------------------------- lying pickles
def _pickle_of(data: bytes) -> bytes:
    return zipfile.ZipFile(io.BytesIO(data)).read("archive/data.pkl")


def test_storage_header_promising_more_bytes_than_the_file_is_refused():
    pkl = _pickle_of(VALID)
    big = pkl.replace(b"K\x0ct", b"J\x00\x00\x00\x7ft", 1)  # numel 12 -> 2**31 - ...
    assert big != pkl
    tracemalloc.start()
    try:
        with pytest.raises(Refused, match="record size"):
            loaded(hookgrad, _rezip(VALID, {"data.pkl": big}))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 50 * len(VALID)


def test_layout_outside_its_storage_is_refused():
    pkl = _pickle_of(VALID)
    # the "v" view: offset 4 -> 200 (past the 12-element storage)
    bad = pkl.replace(b"K\x04K\x02K\x02\x86", b"K\xc8K\x02K\x02\x86", 1)
    assert bad != pkl
    with pytest.raises(Refused, match="setStorage"):
        loaded(hookgrad, _rezip(VALID, {"data.pkl": bad}))


# PyTorch allocates the first two (its weights-only unpickler refuses neither: hookgrad's
# refuses the pickle); the others fail in its unpickler with these types
@pytest.mark.parametrize(("pkl", "expected"), [
    (b"\x80\x02c__builtin__\nbytearray\nJ\x00\x00\x00\x7f\x85R.", pickle.UnpicklingError),
    (b"\x80\x02ctorch\nTensor\nJ\x00\x00\x00\x7f\x85\x81.", pickle.UnpicklingError),
    (b"\x80\x02]" + b"(" * 50000 + b".", IndexError),  # 50k open MARKs
    (b"\x80\x02X\xff\xff\xff\x7f", EOFError),  # a string longer than the pickle
], ids=["bytearray", "tensor-newobj", "marks", "long-string"])
def test_allocation_requests_beyond_the_file_are_refused(pkl, expected):
    tracemalloc.start()
    try:
        with pytest.raises(expected):
            loaded(hookgrad, _rezip(VALID, {"data.pkl": pkl}))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 64 << 20


@pytest.mark.oracle
def test_legacy_format_lying_about_storage_sizes_is_refused(torch):
    data = bytearray(saved(torch, torch.arange(4.0), _use_new_zipfile_serialization=False))
    # the element count before the raw bytes: 4 -> 2**40
    at = data.rindex(struct.pack("<q", 4))
    data[at:at + 8] = struct.pack("<q", 1 << 40)
    with pytest.raises(Refused):
        loaded(hookgrad, bytes(data))
    with pytest.raises(Refused):
        loaded(hookgrad, bytes(data[: len(data) // 2]))


def test_storage_of_a_dtype_hookgrad_lacks_is_refused_by_name():
    pkl = _pickle_of(VALID).replace(b"FloatStorage", b"QInt8Storage", 1)
    with pytest.raises(Refused, match="qint8"):
        loaded(hookgrad, _rezip(VALID, {"data.pkl": pkl}))


def test_mmap_maps_storages_copy_on_write(tmp_path):
    path = tmp_path / "m.pt"
    hookgrad.save({"w": hookgrad.arange(4.0)}, path)
    out = hookgrad.load(path, mmap=True)
    out["w"].add_(1)
    assert out["w"].tolist() == [1.0, 2.0, 3.0, 4.0]
    assert hookgrad.load(path)["w"].tolist() == [0.0, 1.0, 2.0, 3.0]  # the file is unchanged
    with pytest.raises(ValueError, match="file path"):
        hookgrad.load(io.BytesIO(path.read_bytes()), mmap=True)




@pytest.mark.oracle
@pytest.mark.filterwarnings("ignore::UserWarning")
def test_random_mutations_of_torch_files_raise_only_unpickling_errors(torch, deadline):
    model = torch.nn.Sequential(torch.nn.Linear(2, 3), torch.nn.BatchNorm1d(3))
    opt = torch.optim.Adam(model.parameters())
    model(torch.ones(4, 2)).sum().backward()
    opt.step()
    seeds = [saved(torch, {"m": model.state_dict(), "o": opt.state_dict(), "s": {1, 2},
                           "b": b"xy", "c": 1j}),
             saved(torch, model.state_dict(), _use_new_zipfile_serialization=False),
             saved(torch, [torch.arange(10.0)[2:7:2], torch.ones(2, dtype=torch.bfloat16)])]
    rng = random.Random(1)
    n = int(os.environ.get("HOOKGRAD_SERIALIZATION_FUZZ", "300"))
    for _ in range(n):
        data = bytearray(rng.choice(seeds))
        for _ in range(rng.randint(1, 6)):
            data[rng.randrange(len(data))] = rng.randrange(256)
        if rng.random() < 0.1:
            data = data[:rng.randrange(len(data))]
        try:
            loaded(hookgrad, bytes(data))
        except Refused:
            pass


def test_unknown_map_location_is_the_callers_runtime_error():
    with pytest.raises(RuntimeError, match="don't know how to restore") as info:
        loaded(hookgrad, VALID, map_location="xpu")
    assert not isinstance(info.value, pickle.UnpicklingError)
