"""Files in the bad-input corpus: every load/save call crossed with every kind of bad path.

The files are made once per process in a temporary folder with the standard library only (no
library writes them, so both libraries read the same bytes). Paths whose reading blocks or
never ends in PyTorch (a FIFO, `/dev/zero` with `mmap`) are not here: `test_bad_files.py` checks
hookgrad refuses them within a timeout.
"""

from __future__ import annotations

import io
import os
import pickle
import struct
import tarfile
import tempfile
import zipfile

from tests.fuzz._bad_inputs import _add
from tests.fuzz._bad_ops import _x

_DIR: list[str] = []


def _zip(members, *, compression=zipfile.ZIP_STORED, force_zip64=False, prefix=b""):
    buf = io.BytesIO()
    buf.write(prefix)
    with zipfile.ZipFile(buf, "w", compression=compression) as z:
        for name, data in members:
            info = zipfile.ZipInfo(name)
            info.compress_type = compression
            with z.open(info, "w", force_zip64=force_zip64) as f:
                f.write(data)
    return buf.getvalue()


_PKL = pickle.dumps({"a": 1, "b": [1.5, "x"]}, protocol=2)
_GOOD = [("ckpt/data.pkl", _PKL), ("ckpt/byteorder", b"little"), ("ckpt/version", b"3\n")]


def _set_flag(data: bytes, bit: int) -> bytes:
    """Sets a general-purpose flag bit in every local and central header."""
    out = bytearray(data)
    for sig, off in ((b"PK\x03\x04", 6), (b"PK\x01\x02", 8)):
        i = out.find(sig)
        while i >= 0:
            flags = struct.unpack_from("<H", out, i + off)[0] | (1 << bit)
            struct.pack_into("<H", out, i + off, flags)
            i = out.find(sig, i + 4)
    return bytes(out)


def _set_method(data: bytes, method: int) -> bytes:
    out = bytearray(data)
    for sig, off in ((b"PK\x03\x04", 8), (b"PK\x01\x02", 10)):
        i = out.find(sig)
        while i >= 0:
            struct.pack_into("<H", out, i + off, method)
            i = out.find(sig, i + 4)
    return bytes(out)


def _legacy_tar() -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for name in ("storages", "tensors", "pickle"):
            data = pickle.dumps(0, protocol=2)
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


_MAGIC = 0x1950A86A20F9469CFC6C


def _contents() -> dict[str, bytes]:
    good = _zip(_GOOD)
    return {
        "empty": b"",
        "text": b"hello, world\n",
        "wrong_magic": bytes(range(256)) * 4,
        "truncated_zip": good[: len(good) // 2],
        "truncated_zip_tail": good[:-10],
        "zip_encrypted": _set_flag(good, 0),
        "zip_strong_encryption": _set_flag(good, 6),
        "zip_masked_headers": _set_flag(good, 13),
        "zip_method_99": _set_method(good, 99),
        "zip_method_bzip2_bad": _set_method(good, 12),
        "zip64": _zip(_GOOD, force_zip64=True),
        "zip_no_data_pkl": _zip(_GOOD[1:]),
        "zip_bad_pickle": _zip([("ckpt/data.pkl", b"\x80\x02}q\x00(X"), *_GOOD[1:]]),
        "zip_missing_storage": _zip([("ckpt/data.pkl", pickle.dumps(
            ("storage", "x"), protocol=2).replace(b"\x85", b"\x85Q")), *_GOOD[1:]]),
        "zip_two_dirs": _zip([("a/data.pkl", _PKL), ("b/version", b"3\n")]),
        "zip_dup_names": _zip([*_GOOD, ("ckpt/data.pkl", _PKL)]),
        "zip_leading_garbage": _zip(_GOOD, prefix=b"garbage!" * 8),
        "zip_trailing_garbage": good + b"\x00" * 100,
        "zip_empty": _zip([]),
        "legacy_tar": _legacy_tar(),
        "pickle_no_zip": _PKL,
        "pickle_magic_only": pickle.dumps(_MAGIC, protocol=2),
        "pickle_magic_bad_version": pickle.dumps(_MAGIC, protocol=2) + pickle.dumps(999,
                                                                                    protocol=2),
        "pickle_garbage": b"\x80\x02garbage",
    }


def _paths() -> dict[str, str]:
    if not _DIR:
        root = tempfile.mkdtemp(prefix="hookgrad-badfiles-")
        _DIR.append(root)
        for name, data in _contents().items():
            with open(os.path.join(root, name + ".pt"), "wb") as f:
                f.write(data)
        os.symlink("/dev/null", os.path.join(root, "null_link.pt"))
        os.symlink(os.path.join(root, "nowhere.pt"), os.path.join(root, "dangling_link.pt"))
        os.mkdir(os.path.join(root, "folder.pt"))
        with open(os.path.join(root, "plain_file"), "wb") as f:
            f.write(b"x")
    root = _DIR[0]
    paths = {name: os.path.join(root, name + ".pt") for name in _contents()}
    paths.update({
        "missing": os.path.join(root, "missing.pt"),
        "missing_dir": os.path.join(root, "nodir", "x.pt"),
        "file_as_dir": os.path.join(root, "plain_file", "x.pt"),
        "directory": os.path.join(root, "folder.pt"),
        "dev_null": "/dev/null",
        "null_link": os.path.join(root, "null_link.pt"),
        "dangling_link": os.path.join(root, "dangling_link.pt"),
        "empty_name": "",
    })
    return paths


_PATH_KINDS = ("missing", "missing_dir", "file_as_dir", "directory", "dev_null", "null_link",
               "dangling_link", "empty_name", *(
                   "empty", "text", "wrong_magic", "truncated_zip", "truncated_zip_tail",
                   "zip_encrypted", "zip_strong_encryption", "zip_masked_headers",
                   "zip_method_99", "zip_method_bzip2_bad", "zip64", "zip_no_data_pkl",
                   "zip_bad_pickle", "zip_missing_storage", "zip_two_dirs", "zip_dup_names",
                   "zip_leading_garbage", "zip_trailing_garbage", "zip_empty", "legacy_tar",
                   "pickle_no_zip", "pickle_magic_only", "pickle_magic_bad_version",
                   "pickle_garbage"))
_LOADS = {
    "load": lambda lib, p: lib.load(p),
    "load_full": lambda lib, p: lib.load(p, weights_only=False),
    "load_map_cpu": lambda lib, p: lib.load(p, map_location="cpu"),
    "load_mmap": lambda lib, p: lib.load(p, mmap=True),
    "load_fileobj": lambda lib, p: _with_open(p, lambda f: lib.load(f)),
    "load_bytesio": lambda lib, p: _with_bytes(p, lambda f: lib.load(f, weights_only=False)),
}


def _with_open(path, fn):
    with open(path, "rb") as f:
        return fn(f)


def _with_bytes(path, fn):
    with open(path, "rb") as f:
        return fn(io.BytesIO(f.read()))


for _lk, _lf in _LOADS.items():
    for _pk in _PATH_KINDS:
        _add(f"file[{_lk},{_pk}]", lambda lib, lf=_lf, pk=_pk: lf(lib, _paths()[pk]))

_LOAD_OPTIONS = {
    "map_cuda": {"map_location": "cuda"}, "map_nope": {"map_location": "nope"},
    "map_int": {"map_location": 3}, "map_list": {"map_location": ["cpu"]},
    "map_fn_raises": {"map_location": lambda s, loc: 1 / 0},
    "map_fn_wrong_return": {"map_location": lambda s, loc: 3},
    "weights_only_pickle_module": {"weights_only": True, "pickle_module": pickle},
    "pickle_module_bad": {"pickle_module": 3, "weights_only": False},
    "mmap_str": {"mmap": "yes"}, "unknown_kw": {"nope": 1},
    "encoding_bad": {"weights_only": False, "encoding": "nope"},
}


def _saved(lib):
    """A checkpoint saved by the library under test (a real one, with a tensor)."""
    path = os.path.join(_paths()["missing"] + f".{lib.__name__}.saved")
    if not os.path.exists(path):
        lib.save({"w": _x(lib, 2, 2)}, path)
    return path


for _ok, _ov in _LOAD_OPTIONS.items():
    _add(f"file[load_options,{_ok}]", lambda lib, ov=_ov: lib.load(_saved(lib), **ov))
_add("file[load_mmap_fileobj]", lambda lib: _with_bytes(_saved(lib), lambda f: lib.load(
    f, mmap=True)))
_add("file[load_not_path]", lambda lib: lib.load(3.5))
_add("file[load_none]", lambda lib: lib.load(None))
_add("file[load_text_io]", lambda lib: lib.load(io.StringIO("abc")))
_add("file[load_bytes]", lambda lib: lib.load(b"PK\x03\x04"))

_SAVE_TARGETS = ("missing_dir", "file_as_dir", "directory", "empty_name")
_SAVES = {
    "save": lambda lib, p: lib.save(_x(lib, 2), p),
    "save_legacy": lambda lib, p: lib.save(_x(lib, 2), p, _use_new_zipfile_serialization=False),
    "save_module": lambda lib, p: lib.save(lib.nn.Linear(2, 2), p),
}
for _sk, _sf in _SAVES.items():
    for _pk in _SAVE_TARGETS:
        _add(f"file[{_sk},{_pk}]", lambda lib, sf=_sf, pk=_pk: sf(lib, _paths()[pk]))
_SAVE_FAULTS = {
    "lambda": lambda lib, p: lib.save(lambda: 1, p),
    "generator": lambda lib, p: lib.save((i for i in range(2)), p),
    "local_class": lambda lib, p: lib.save(type("Local", (), {})(), p),
    "protocol_99": lambda lib, p: lib.save(_x(lib, 2), p, pickle_protocol=99),
    "protocol_str": lambda lib, p: lib.save(_x(lib, 2), p, pickle_protocol="a"),
    "pickle_module_int": lambda lib, p: lib.save(_x(lib, 2), p, pickle_module=3),
    "read_only_fileobj": lambda lib, p: _with_open(_saved(lib), lambda f: lib.save(_x(lib, 2),
                                                                                    f)),
    "to_int": lambda lib, p: lib.save(_x(lib, 2), 3.5),
    "to_none": lambda lib, p: lib.save(_x(lib, 2), None),
    "to_string_io": lambda lib, p: lib.save(_x(lib, 2), io.StringIO()),
    "unknown_kw": lambda lib, p: lib.save(_x(lib, 2), p, nope=1),
    "no_target": lambda lib, p: lib.save(_x(lib, 2)),
}
for _sk, _sf in _SAVE_FAULTS.items():
    _add(f"file[save_fault,{_sk}]",
         lambda lib, sf=_sf: sf(lib, _paths()["missing"] + f".{lib.__name__}.fault"))
