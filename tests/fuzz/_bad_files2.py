"""``save``/``load`` with file objects in the wrong mode or state, and objects that cannot be
saved or loaded under ``weights_only``, in the bad-input corpus (see `_bad_inputs`); the bad
targets and bad archives are in `_bad_files`."""

from __future__ import annotations

import io
import os
import pickle
import tempfile
import threading

from tests.fuzz._bad_inputs import _add
from tests.fuzz._bad_ops import _x

_DIR: list[str] = []


def _path(name: str) -> str:
    if not _DIR:
        _DIR.append(tempfile.mkdtemp(prefix="hookgrad-badfiles2-"))
    return os.path.join(_DIR[0], name)


def _saved(lib) -> str:
    """A checkpoint saved by the library under test."""
    path = _path(f"good.{lib.__name__}.pt")
    if not os.path.exists(path):
        lib.save({"w": _x(lib, 2)}, path)
    return path


def _open(lib, mode: str, fn, saved: bool = True):
    path = _saved(lib) if saved else _path(f"target.{lib.__name__}.{mode.replace('+', 'p')}")
    with open(path, mode) as f:
        return fn(f)


def _closed(kind: str):
    f = io.BytesIO() if kind == "bytesio" else open(_path("closed"), "wb")  # noqa: SIM115
    f.close()
    return f


class _Local:
    """A class of this module: a module-level class is fine for pickle, not for weights_only."""

    def __init__(self) -> None:
        self.value = 1


def _saved_object(lib, name: str, obj) -> str:
    path = _path(f"{name}.{lib.__name__}.pt")
    lib.save(obj, path)
    return path


_FILE_MODES = {
    "save_to_read_mode": lambda lib: _open(lib, "rb", lambda f: lib.save(_x(lib, 2), f)),
    "save_to_text_mode": lambda lib: _open(lib, "w", lambda f: lib.save(_x(lib, 2), f),
                                           saved=False),
    "save_to_append_text": lambda lib: _open(lib, "a", lambda f: lib.save(_x(lib, 2), f),
                                             saved=False),
    "save_to_closed_file": lambda lib: lib.save(_x(lib, 2), _closed("file")),
    "save_to_closed_bytesio": lambda lib: lib.save(_x(lib, 2), _closed("bytesio")),
    "save_to_bytes": lambda lib: lib.save(_x(lib, 2), b"abc"),
    "save_to_list": lambda lib: lib.save(_x(lib, 2), []),
    "load_text_mode": lambda lib: _open(lib, "r", lambda f: lib.load(f)),
    "load_write_only": lambda lib: _open(lib, "ab", lambda f: lib.load(f), saved=False),
    "load_closed_file": lambda lib: lib.load(_closed("file")),
    "load_closed_bytesio": lambda lib: lib.load(_closed("bytesio")),
    "load_at_end": lambda lib: _open(lib, "rb", lambda f: (f.seek(0, 2), lib.load(f))),
    "load_empty_bytesio": lambda lib: lib.load(io.BytesIO()),
    "load_list": lambda lib: lib.load([1, 2]),
    "load_int_fd": lambda lib: lib.load(0),
    "load_path_with_nul": lambda lib: lib.load(_path("a\x00b")),
    "load_weights_only_str": lambda lib: lib.load(_saved(lib), weights_only="yes"),
    "load_map_location_device_obj_cuda": lambda lib: lib.load(
        _saved(lib), map_location=lib.device("cuda")),
    "load_map_location_dict_cuda": lambda lib: lib.load(
        _saved(lib), map_location={"cpu": "cuda:0"}),
}
for _k, _f in _FILE_MODES.items():
    _add(f"file2[{_k}]", _f)

_UNSAVABLE = {
    "lock": lambda lib: threading.Lock(),
    "file_object": lambda lib: io.BufferedReader(io.BytesIO(b"x")),
    "generator_in_dict": lambda lib: {"g": (i for i in range(2))},
    "lambda_in_list": lambda lib: [lambda: 1],
    "module_with_lambda_attr": "@module_lambda",
    "tensor_with_lambda_attr": "@tensor_lambda",
    "local_function": "@local_fn",
}


def _unsavable(lib, spec):
    if spec == "@module_lambda":
        m = lib.nn.Linear(2, 2)
        m.fn = lambda x: x
        return m
    if spec == "@tensor_lambda":
        t = _x(lib, 2)
        t.fn = lambda: 1
        return t
    if spec == "@local_fn":
        def local():
            return 1
        return local
    return spec(lib)


for _k, _f in _UNSAVABLE.items():
    _add(f"file2[save_unsavable,{_k}]",
         lambda lib, f=_f: lib.save(_unsavable(lib, f), io.BytesIO()))

# saved fine, refused by the weights-only unpickler (the default of load)
_NOT_WEIGHTS = {
    "module": lambda lib: lib.nn.Linear(2, 2),
    "local_class_instance": lambda lib: _Local(),
    "function": lambda lib: os.getcwd,
    "numpy_array": lambda lib: __import__("numpy").ones(2),
    "bytearray_subclass": lambda lib: type(_Local)("B", (), {}),
    "exception": lambda lib: ValueError("x"),
    "pickle_of_set_subclass": lambda lib: pickle.PicklingError("x"),
}
for _k, _f in _NOT_WEIGHTS.items():
    _add(f"file2[weights_only_refuses,{_k}]",
         lambda lib, f=_f, k=_k: lib.load(_saved_object(lib, k, f(lib))))
