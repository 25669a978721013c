"""Writing PyTorch's zip checkpoint format, so ``torch.load`` reads what `save` writes.

The object is pickled (protocol 2 by default, as PyTorch) with PyTorch's names: a tensor as
``torch._utils._rebuild_tensor_v2(storage, offset, size, stride, requires_grad, hooks)`` whose
storage is a persistent id ``('storage', torch.<Type>Storage, key, 'cpu', numel)``; a Parameter
through ``torch._utils._rebuild_parameter``; ``Size``, ``device`` and dtypes as ``torch.Size``,
``torch.device``, ``torch.float32``; a hookgrad class under its PyTorch path
(`_class_paths`); a module with PyTorch's ``__dict__`` shape (`_module_state`). Each storage is
written once, whole, as ``data/<key>`` in little-endian byte order, so tensors that shared a
storage share it again after loading, with their offsets and strides. Pickling happens before
anything is written: an object that cannot be pickled leaves the target untouched.
"""

from __future__ import annotations

import copyreg
import io
import pickle
import struct
import sys
import types
import uuid
import zipfile
from collections import OrderedDict
from typing import Any

import numpy as np

from hookgrad import _backend, _dtypes
from hookgrad._serialization import _class_paths, _dtypes_map, _module_state
from hookgrad._storage import TypedStorage, UntypedStorage
from hookgrad._storage_layout import storage_layout
from hookgrad._tensor import Tensor
from hookgrad.nn.parameter import Parameter

__all__ = ["pickle_object", "write_archive", "write_legacy", "FORMAT_VERSION"]

FORMAT_VERSION = b"3\n"  # the ``version`` record torch.save writes
_DATE = (1980, 1, 1, 0, 0, 0)


class _Global:
    """Pickles as the global ``module.name`` without importing it (PyTorch's names)."""

    __slots__ = ("module", "name")

    def __init__(self, module: str, name: str) -> None:
        self.module, self.name = module, name

    def __call__(self, *args: Any) -> Any:  # pickle's save_reduce insists on a callable
        raise TypeError(f"{self.module}.{self.name} is a name in a pickle, not a function")


_GLOBALS: dict[tuple[str, str], _Global] = {}


def _g(module: str, name: str) -> _Global:
    return _GLOBALS.setdefault((module, name), _Global(module, name))


class _StorageRef:
    """One storage to write: its persistent id and its flat elements."""

    __slots__ = ("pid", "flat", "store")

    def __init__(self, pid: tuple, flat: np.ndarray, store: Any) -> None:
        self.pid, self.flat, self.store = pid, flat, store


class _Storages:
    """The storages met while pickling, each once (keyed by the array object under them)."""

    def __init__(self, legacy: bool = False) -> None:
        self.refs: dict[tuple[int, str], _StorageRef] = {}
        self.legacy = legacy  # legacy persistent ids end with a (never used) view entry

    def ref(self, store: Any, flat: Any, untyped: bool = False) -> _StorageRef:
        kind = "untyped" if untyped else "typed"
        hit = self.refs.get((id(store), kind))
        if hit is None and (id(store), "typed" if untyped else "untyped") in self.refs:
            raise RuntimeError("Cannot save multiple tensors or storages that view the same "
                               "data as different types")
        if hit is None:
            arr = np.ascontiguousarray(_backend.to_numpy(flat)).reshape(-1)
            if untyped:
                arr, stype = arr.view(np.uint8), _g("torch.storage", "UntypedStorage")
            else:
                stype = _g("torch", _dtypes_map.storage_name(_dtypes.from_numpy_dtype(arr.dtype)))
            key = str(len(self.refs))
            pid: tuple = ("storage", stype, key, "cpu", int(arr.size))
            hit = _StorageRef(pid + (None,) if self.legacy else pid, arr, store)
            self.refs[(id(store), kind)] = hit
        return hit


class TorchPickler(pickle._Pickler):  # type: ignore[name-defined]
    """Python's pickler with PyTorch's names for hookgrad objects (module docstring)."""

    dispatch = dict(pickle._Pickler.dispatch)  # type: ignore[attr-defined]

    def __init__(self, file: Any, protocol: int, storages: _Storages) -> None:
        super().__init__(file, protocol)
        self.storages = storages

    def persistent_id(self, obj: Any) -> Any:
        if isinstance(obj, _StorageRef):
            return obj.pid
        if isinstance(obj, (TypedStorage, UntypedStorage)):
            arr = obj._array
            return self.storages.ref(arr, arr, untyped=isinstance(obj, UntypedStorage)).pid
        return None

    def reducer_override(self, obj: Any) -> Any:
        if isinstance(obj, Tensor):
            return self._reduce_tensor(obj)
        t = type(obj)
        if t is _dtypes.Size:
            return (_g("torch", "Size"), (tuple(obj),))
        if t is _backend.device:
            args = (obj.type,) if obj.index is None else (obj.type, obj.index)
            return (_g("torch", "device"), args)
        if t is not type and _module_state.is_module(obj):
            return (copyreg.__newobj__, (t,), _module_state.torch_state(obj))
        return NotImplemented

    def _reduce_tensor(self, t: Tensor) -> tuple:
        # Python attributes set on a tensor travel with it, as PyTorch's ``__reduce_ex__``
        # pickles them (so an unpicklable one fails the save, as there). Underscore names are
        # left out: hookgrad keeps its own bookkeeping there (a view's ``_base``, ...).
        state = {k: v for k, v in (getattr(t, "__dict__", None) or {}).items()
                 if not k.startswith("_")}
        if isinstance(t, Parameter):
            if state:
                return (_g("torch._utils", "_rebuild_parameter_with_state"),
                        (t.detach(), bool(t.requires_grad), OrderedDict(), state))
            return (_g("torch._utils", "_rebuild_parameter"),
                    (t.detach(), bool(t.requires_grad), OrderedDict()))
        func, args = self._plain_tensor(t)
        if state:
            return (_g("torch._tensor", "_rebuild_from_type_v2"),
                    (func, _g("torch", "Tensor"), args, state))
        return func, args

    def _plain_tensor(self, t: Tensor) -> tuple:
        layout = storage_layout(t)
        if t.dtype in _dtypes.WIDE_UNSIGNED:  # no legacy storage class: PyTorch's v3 form
            ref = self.storages.ref(layout.store, layout.flat, untyped=True)
            return (_g("torch._utils", "_rebuild_tensor_v3"),
                    (ref, int(layout.offset), tuple(int(n) for n in t.shape),
                     tuple(int(s) for s in layout.stride), bool(t.requires_grad), OrderedDict(),
                     t.dtype))
        ref = self.storages.ref(layout.store, layout.flat)
        return (_g("torch._utils", "_rebuild_tensor_v2"),
                (ref, int(layout.offset), tuple(int(n) for n in t.shape),
                 tuple(int(s) for s in layout.stride), bool(t.requires_grad), OrderedDict()))

    def _write_global(self, module: str, name: str) -> None:
        if self.proto >= 4:
            self.save(module)
            self.save(name)
            self.write(pickle.STACK_GLOBAL)
        else:
            self.write(pickle.GLOBAL + f"{module}\n{name}\n".encode("utf-8"))

    def _save_marker(self, obj: _Global) -> None:
        self._write_global(obj.module, obj.name)
        self.memoize(obj)

    def _save_dtype(self, obj: _dtypes.dtype) -> None:
        self._write_global("torch", obj.name)
        self.memoize(obj)

    dispatch[_Global] = _save_marker
    dispatch[_dtypes.dtype] = _save_dtype

    def save_global(self, obj: Any, name: str | None = None) -> None:
        module = getattr(obj, "__module__", None) or ""
        qualname = name or getattr(obj, "__qualname__", None) or obj.__name__
        if module == "hookgrad" or module.startswith("hookgrad."):
            self._write_global(*_class_paths.torch_path(module, qualname))
            self.memoize(obj)
            return
        _refuse_local(qualname)
        super().save_global(obj, name)

    def _save_function(self, obj: Any, name: str | None = None) -> None:
        _refuse_local(name or getattr(obj, "__qualname__", ""))
        pickle._Pickler.save_global(self, obj, name)  # type: ignore[attr-defined]

    dispatch[types.FunctionType] = _save_function


def _refuse_local(qualname: str) -> None:
    """What the C pickler PyTorch uses raises for a function or class defined in a function."""
    if "<locals>" in qualname:
        raise AttributeError(f"Can't pickle local object {qualname!r}")


def pickle_object(obj: Any, protocol: int,
                  legacy: bool = False) -> tuple[bytes, list[_StorageRef]]:
    """``data.pkl`` of `obj` and the storages it refers to, in key order."""
    buf = io.BytesIO()
    storages = _Storages(legacy)
    TorchPickler(buf, protocol, storages).dump(obj)
    return buf.getvalue(), list(storages.refs.values())


def _info(name: str) -> zipfile.ZipInfo:
    info = zipfile.ZipInfo(name, date_time=_DATE)
    info.compress_type = zipfile.ZIP_STORED
    return info


def write_storage(member: Any, flat: np.ndarray) -> None:
    """The bytes of one storage, little-endian (PyTorch's ``byteorder`` record says so)."""
    if sys.byteorder != "little":  # pragma: no cover - big-endian hosts
        flat = flat.astype(flat.dtype.newbyteorder("<"))
    member.write(memoryview(flat.view(np.uint8)))


def write_archive(fh: Any, name: str, data_pkl: bytes, storages: list[_StorageRef],
                  byteorder_record: bool = True) -> None:
    """Write PyTorch's zip archive (records under ``<name>/``) into the binary file `fh`."""
    with zipfile.ZipFile(fh, "w", compression=zipfile.ZIP_STORED) as zf:
        zf.writestr(_info(f"{name}/data.pkl"), data_pkl)
        zf.writestr(_info(f"{name}/.format_version"), b"1")
        zf.writestr(_info(f"{name}/.storage_alignment"), b"64")
        if byteorder_record:
            zf.writestr(_info(f"{name}/byteorder"), b"little")
        for ref in storages:
            nbytes = ref.flat.nbytes
            info = _info(f"{name}/data/{ref.pid[2]}")
            info.file_size = nbytes
            with zf.open(info, "w", force_zip64=nbytes >= zipfile.ZIP64_LIMIT) as member:
                write_storage(member, ref.flat)
        zf.writestr(_info(f"{name}/version"), FORMAT_VERSION)
        zf.writestr(_info(f"{name}/.data/serialization_id"),
                    f"{uuid.uuid4().int:040d}"[-40:].encode())


_LEGACY_MAGIC = 0x1950A86A20F9469CFC6C
_LEGACY_SYS_INFO = {"protocol_version": 1001, "little_endian": True,
                    "type_sizes": {"short": 2, "int": 4, "long": 4}}


def write_legacy(fh: Any, data_pkl: bytes, storages: list[_StorageRef], protocol: int) -> None:
    """PyTorch's legacy format (``_use_new_zipfile_serialization=False``) into `fh`."""
    for header in (_LEGACY_MAGIC, 1001, _LEGACY_SYS_INFO):
        fh.write(pickle.dumps(header, protocol=protocol))
    fh.write(data_pkl)
    ordered = sorted(storages, key=lambda ref: ref.pid[2])  # PyTorch sorts the keys as text
    fh.write(pickle.dumps([ref.pid[2] for ref in ordered], protocol=protocol))
    for ref in ordered:
        fh.write(struct.pack("<q", ref.flat.size))
        write_storage(fh, ref.flat)
