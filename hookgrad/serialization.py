"""`save` / `load`: checkpoints of tensors and state dicts that never execute code on load.

File format (``hookgrad-checkpoint``, version 1)
-------------------------------------------------
A ZIP archive (members stored uncompressed) holding:

``hookgrad_checkpoint.json``
    UTF-8 JSON manifest::

        {"format": "hookgrad-checkpoint", "version": 1,
         "tensors": [{"file": "arrays/0.npy", "dtype": "float32", "shape": [2, 3],
                      "requires_grad": false, "parameter": false, "device": "cpu"}, ...],
         "root": <node>}

``arrays/<n>.npy``
    One array per distinct tensor, in NumPy's ``.npy`` format written with
    ``allow_pickle=False`` (so object arrays cannot occur).

A ``<node>`` is a JSON object tagged by ``"kind"``:

===================================  =====================================================
``{"kind": "none"}``                 ``None``
``{"kind": "bool", "value": b}``     ``True`` / ``False``
``{"kind": "int", "value": n}``      ``int`` (NumPy integers are saved as ``int``)
``{"kind": "float", "value": h}``    ``float`` as ``float.hex()`` (exact; inf and nan too)
``{"kind": "str", "value": s}``      ``str``
``{"kind": "list" | "tuple",``       list / tuple of nodes
``"items": [...]}``
``{"kind": "dict" | "ordered_dict"`` ``dict`` / ``OrderedDict`` / ``Counter``: ``items`` is
``| "counter", "items": [[k, v]]}``  a list of ``[key node, value node]`` pairs; keys are
                                     ``none``/``bool``/``int``/``float``/``str``/``tuple``
``{"kind": "tensor", "ref": i}``     ``tensors[i]`` of the manifest
===================================  =====================================================

A tensor reachable several times is stored once and loads as one object (views of one storage
are stored separately and load unshared). ``requires_grad`` and the ``nn.Parameter`` type are
restored; autograd history is not.

Loading only parses JSON and ``.npy`` headers: nothing is unpickled and no code runs, so
``weights_only`` makes no difference. Any file that is not a well-formed checkpoint (a pickle,
a ``torch.save`` archive, an unknown node kind, an array whose dtype or shape disagrees with
the manifest) raises ``pickle.UnpicklingError``, the type torch's weights-only loader raises.

Saving to a path is atomic: the archive is written to a temporary file in the same directory,
flushed and ``fsync``-ed, then moved over the target with ``os.replace``; a failure at any point
leaves the previous file untouched. Saving to a file object writes into it directly.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import pickle
import tempfile
import zipfile
from collections import Counter, OrderedDict
from collections.abc import Callable
from typing import Any

import numpy as np

from hookgrad import _backend
from hookgrad._dtypes import from_numpy_dtype
from hookgrad._tensor import Tensor
from hookgrad.nn.parameter import Parameter

__all__ = ["save", "load"]

FORMAT = "hookgrad-checkpoint"
VERSION = 1
MANIFEST = "hookgrad_checkpoint.json"
_MAP_KINDS = {dict: "dict", OrderedDict: "ordered_dict", Counter: "counter"}
_MAP_TYPES = {kind: cls for cls, kind in _MAP_KINDS.items()}


# ---------------------------------------------------------------------------------- save
# pickle protocol `save` uses by default (PyTorch's value).
DEFAULT_PROTOCOL = 2

class _Encoder:
    """Turns an object tree into manifest nodes, collecting each distinct tensor once."""

    def __init__(self) -> None:
        self.tensors: list[Tensor] = []
        self.refs: dict[int, int] = {}

    def node(self, obj: Any, key: bool = False) -> dict[str, Any]:
        """The manifest node of `obj` (`key`: it is a dict key, so it must be hashable)."""
        if obj is None:
            return {"kind": "none"}
        if isinstance(obj, (bool, np.bool_)):
            return {"kind": "bool", "value": bool(obj)}
        if isinstance(obj, (int, np.integer)):
            return {"kind": "int", "value": int(obj)}
        if isinstance(obj, (float, np.floating)):
            return {"kind": "float", "value": float(obj).hex()}
        if isinstance(obj, str):
            return {"kind": "str", "value": obj}
        if isinstance(obj, tuple) and not hasattr(obj, "_fields"):
            return {"kind": "tuple", "items": [self.node(v, key) for v in obj]}
        if key:
            raise TypeError(f"hookgrad.save: unsupported dict key of type {type(obj).__name__}")
        if isinstance(obj, Tensor):
            return {"kind": "tensor", "ref": self.tensor_ref(obj)}
        if type(obj) is list:
            return {"kind": "list", "items": [self.node(v) for v in obj]}
        kind = _MAP_KINDS.get(type(obj))
        if kind is not None:
            return {"kind": kind,
                    "items": [[self.node(k, key=True), self.node(v)] for k, v in obj.items()]}
        raise TypeError(
            f"hookgrad.save cannot serialize an object of type {type(obj).__qualname__}; "
            "supported: tensors, None, bool, int, float, str, and lists, tuples, dicts, "
            "OrderedDicts and Counters of those (save a module's state_dict(), not the module)"
        )

    def tensor_ref(self, t: Tensor) -> int:
        """Index of `t` in the manifest's tensor table (added on first sight)."""
        ref = self.refs.get(id(t))
        if ref is None:
            ref = self.refs[id(t)] = len(self.tensors)
            self.tensors.append(t)
        return ref


def _tensor_entry(i: int, t: Tensor) -> dict[str, Any]:
    return {"file": f"arrays/{i}.npy", "dtype": t.dtype.name, "shape": list(t.shape),
            "requires_grad": bool(t.requires_grad), "parameter": isinstance(t, Parameter),
            "device": str(t.device)}


def _write_archive(fh: Any, obj: Any) -> None:
    """Write the whole checkpoint of `obj` into the binary file object `fh`."""
    enc = _Encoder()
    root = enc.node(obj)  # encode first: an unsupported object fails before any write
    manifest = {"format": FORMAT, "version": VERSION,
                "tensors": [_tensor_entry(i, t) for i, t in enumerate(enc.tensors)],
                "root": root}
    with zipfile.ZipFile(fh, "w", compression=zipfile.ZIP_STORED) as zf:
        for entry, t in zip(manifest["tensors"], enc.tensors, strict=True):
            with zf.open(entry["file"], "w", force_zip64=True) as member:
                _write_array(member, _backend.to_numpy(t._data))
        zf.writestr(MANIFEST, json.dumps(manifest, ensure_ascii=False))


def _write_array(member: Any, arr: np.ndarray) -> None:
    np.save(member, arr, allow_pickle=False)


def _atomic_write(path: str, write: Callable[[Any], None]) -> None:
    """Write via a same-directory temporary file, fsync, then ``os.replace`` over `path`."""
    directory = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix="." + os.path.basename(path) + ".", suffix=".tmp",
                               dir=directory)
    try:
        with os.fdopen(fd, "wb") as fh:
            write(fh)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, 0o666 & ~_umask())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    _fsync_directory(directory)


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _fsync_directory(directory: str) -> None:
    """Make the rename itself durable (POSIX); a no-op where directories cannot be opened."""
    try:
        dir_fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(dir_fd)
    except OSError:
        pass
    finally:
        os.close(dir_fd)


def save(obj: Any, f: Any, pickle_module: Any = None, pickle_protocol: int = 2) -> None:
    """Save tensors, state dicts or optimizer state dicts to a checkpoint file.

    See the module docstring for the format. Saving to a path is atomic.

    Args:
        obj: a tensor or a nest of lists/tuples/dicts/OrderedDicts of tensors, numbers,
            strings, bools and ``None`` (a module's or an optimizer's ``state_dict()``).
        f: a path (``str`` / ``os.PathLike``) or a writable binary file object.
        pickle_module: accepted for API compatibility; must be ``None`` (nothing is pickled).
        pickle_protocol: accepted for API compatibility; ignored.

    Raises:
        TypeError: `obj` contains an unsupported type (nothing is written).

    Example:
        >>> import io, hookgrad
        >>> buf = io.BytesIO()
        >>> hookgrad.save({"w": hookgrad.ones(2)}, buf)
        >>> _ = buf.seek(0)
        >>> hookgrad.load(buf)["w"].tolist()
        [1.0, 1.0]

    Mirrors: ``torch.save`` (different, pickle-free file format).
    """
    if pickle_module is not None:
        raise TypeError("hookgrad.save never pickles: pickle_module must be None")
    if isinstance(f, (str, os.PathLike)):
        _atomic_write(os.fspath(f), lambda fh: _write_archive(fh, obj))
    else:
        _write_archive(f, obj)


# ---------------------------------------------------------------------------------- load
def _refuse(reason: str) -> pickle.UnpicklingError:
    return pickle.UnpicklingError(
        f"hookgrad.load refused the file: {reason}. hookgrad.load only reads hookgrad "
        "checkpoints (JSON manifest + .npy arrays) and never unpickles or runs code."
    )


class _Decoder:
    """Rebuilds the object tree from manifest nodes, reading each tensor once."""

    def __init__(self, zf: zipfile.ZipFile, entries: list, map_location: Any) -> None:
        self.zf, self.entries, self.map_location = zf, entries, map_location
        self.loaded: dict[int, Tensor] = {}

    def node(self, n: Any, key: bool = False) -> Any:
        """The object for manifest node `n`; anything malformed is refused."""
        if not isinstance(n, dict):
            raise _refuse("malformed manifest node")
        kind = n.get("kind")
        if kind == "none":
            return None
        if kind in ("bool", "int", "str"):
            return _typed(n.get("value"), {"bool": bool, "int": int, "str": str}[kind])
        if kind == "float":
            try:
                return float.fromhex(_typed(n.get("value"), str))
            except ValueError:
                raise _refuse("malformed float") from None
        if kind == "tuple":
            return tuple(self.node(v, key) for v in _typed(n.get("items"), list))
        if key:
            raise _refuse(f"unsupported dict key kind {kind!r}")
        if kind == "list":
            return [self.node(v) for v in _typed(n.get("items"), list)]
        if kind in _MAP_TYPES:
            pairs = _typed(n.get("items"), list)
            if not all(isinstance(p, list) and len(p) == 2 for p in pairs):
                raise _refuse("malformed mapping")
            out = _MAP_TYPES[kind]()
            for k, v in pairs:
                out[self.node(k, key=True)] = self.node(v)
            return out
        if kind == "tensor":
            return self.tensor(_typed(n.get("ref"), int))
        raise _refuse(f"unknown node kind {kind!r}")

    def tensor(self, ref: int) -> Tensor:
        """The tensor at `ref` of the manifest's table, read once however often referenced."""
        if ref in self.loaded:
            return self.loaded[ref]
        if not 0 <= ref < len(self.entries):
            raise _refuse("tensor reference out of range")
        t = _read_tensor(self.zf, self.entries[ref], self.map_location)
        self.loaded[ref] = t
        return t


def _typed(value: Any, kind: type) -> Any:
    if type(value) is not kind:
        raise _refuse(f"expected a JSON {kind.__name__} in the manifest")
    return value


def _read_tensor(zf: zipfile.ZipFile, entry: Any, map_location: Any) -> Tensor:
    if not isinstance(entry, dict):
        raise _refuse("malformed tensor entry")
    name = _typed(entry.get("file"), str)
    try:
        with zf.open(name) as member:
            arr = np.load(member, allow_pickle=False)
        dtype = from_numpy_dtype(arr.dtype)
    except (KeyError, ValueError, TypeError, OSError, EOFError) as exc:
        raise _refuse(f"bad array {name!r} ({exc})") from None
    if dtype.name != entry.get("dtype") or list(arr.shape) != entry.get("shape"):
        raise _refuse(f"array {name!r} does not match its manifest entry")
    location = _typed(entry.get("device", "cpu"), str)
    t = _place(Tensor._make(arr), location, map_location)
    requires_grad = _typed(entry.get("requires_grad", False), bool)
    if _typed(entry.get("parameter", False), bool):
        return Parameter(t, requires_grad=requires_grad)
    if requires_grad:
        t.requires_grad_(True)
    return t


def _place(t: Tensor, location: str, map_location: Any) -> Tensor:
    """Move a freshly read CPU tensor to where `map_location` says (default: where it was)."""
    if callable(map_location):
        moved = map_location(t, location)
        return t if moved is None else moved
    target: Any = location
    if isinstance(map_location, dict):
        target = map_location.get(location, location)
    elif map_location is not None:
        target = map_location
    dev = _backend.device(str(target) if not isinstance(target, _backend.device) else target)
    if dev.type == "cpu":
        return t
    xp = _backend.namespace_for(dev)  # raises when the device is unavailable
    return Tensor._make(xp.asarray(t._data))  # pragma: no cover - needs a GPU backend


def _open_zip(f: Any) -> zipfile.ZipFile:
    try:
        if isinstance(f, (str, os.PathLike)):
            return zipfile.ZipFile(os.fspath(f), "r")
        if not (hasattr(f, "seekable") and f.seekable()):
            f = io.BytesIO(f.read())
        return zipfile.ZipFile(f, "r")
    except zipfile.BadZipFile:
        raise _refuse("not a hookgrad checkpoint (not a ZIP archive)") from None


def _read_manifest(zf: zipfile.ZipFile) -> dict:
    try:
        manifest = json.loads(zf.read(MANIFEST).decode("utf-8"))
    except KeyError:
        raise _refuse("no hookgrad manifest (is it a torch.save or pickle file?)") from None
    except (ValueError, UnicodeDecodeError):
        raise _refuse("the manifest is not valid JSON") from None
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise _refuse("unknown format")
    if manifest.get("version") != VERSION:
        raise _refuse(f"unsupported checkpoint version {manifest.get('version')!r}")
    return manifest


def load(f: Any, map_location: Any = None, pickle_module: Any = None, *,
         weights_only: bool | None = True, mmap: bool | None = None, **kwargs: Any) -> Any:
    """Load an object saved with `save`.

    Args:
        f: a path or a readable binary file object.
        map_location: where tensors go: ``None`` (where they were saved), a device or device
            string, a dict mapping saved device strings to devices, or a callable
            ``fn(tensor, saved_location) -> tensor | None``.
        pickle_module: accepted for API compatibility; must be ``None``.
        weights_only: accepted for API compatibility; ``True`` and ``False`` behave the same,
            since loading never unpickles or runs code.
        mmap: must be falsy (members of the archive are read into memory).
        **kwargs: pickle load arguments of torch; not accepted (nothing is unpickled).

    Returns:
        The saved object, rebuilt with fresh tensors.

    Raises:
        pickle.UnpicklingError: `f` is not a well-formed hookgrad checkpoint.

    Mirrors: ``torch.load`` (always the safe, weights-only behaviour).
    """
    if pickle_module is not None or kwargs:
        raise TypeError("hookgrad.load never unpickles: pickle_module and pickle load "
                        "arguments are not supported")
    if mmap:
        raise NotImplementedError("hookgrad.load does not support mmap=True")
    with _open_zip(f) as zf:
        manifest = _read_manifest(zf)
        entries = _typed(manifest.get("tensors"), list)
        return _Decoder(zf, entries, map_location).node(manifest.get("root"))
