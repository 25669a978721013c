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
``weights_only`` makes no difference. Reading goes through one bounded reader
(`hookgrad.utils._bounded_read`): members must be stored uncompressed, every tensor entry has its
own array member, and a ``.npy`` header's shape must match the bytes actually present, so what
is allocated is bounded by the size of the file. Any file that is not a well-formed checkpoint
(a pickle, a ``torch.save`` archive, flipped bits, truncation, compressed members, objects nested
more than `MAX_DEPTH` levels, an array whose dtype or shape disagrees with the manifest) raises
``pickle.UnpicklingError``, the type torch's weights-only loader raises, with the reason in its
message. A missing or unreadable *path* raises the `OSError` ``open`` gives, as in torch.

Saving to a path (`hookgrad.utils._safe_write`) is atomic for regular files: the archive is
written to a temporary file ``.<name>.hookgrad-save.<host>.<pid>.<random>.tmp`` in the same
directory, flushed and ``fsync``-ed, then moved over the target with ``os.replace``; a failure
or a kill at any point leaves the previous file whole, and the next save to that path removes
temporaries left by dead processes. Symlinks are followed (the link stays); devices and FIFOs
are written through, never replaced. Saving to a file object writes into it directly.
"""

from __future__ import annotations

import json
import os
import pickle
import zipfile
from collections import Counter, OrderedDict
from typing import Any

import numpy as np

from hookgrad import _backend
from hookgrad._dtypes import ALL_DTYPES, from_numpy_dtype
from hookgrad._tensor import Tensor
from hookgrad.nn.parameter import Parameter
from hookgrad.utils._bounded_read import Malformed, guarded, open_archive, read_member, read_npy
from hookgrad.utils._safe_write import write_file

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
        write_file(os.fspath(f), lambda fh: _write_archive(fh, obj))
    else:
        _write_archive(f, obj)


# ---------------------------------------------------------------------------------- load
MAX_DEPTH = 512  # nesting of the object tree; state dicts use a handful of levels
MAX_MANIFEST = 256 * 1024 * 1024
_ARRAY_DTYPES = frozenset(d.name for d in ALL_DTYPES)


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
        files = [e.get("file") if isinstance(e, dict) else None for e in entries]
        if len(set(files)) != len(files):  # one array member per entry, as the writer makes
            raise Malformed("several tensor entries share one array member")

    def node(self, n: Any, key: bool = False, depth: int = 0) -> Any:
        """The object for manifest node `n`; anything malformed is refused."""
        if not isinstance(n, dict):
            raise Malformed("malformed manifest node")
        if depth > MAX_DEPTH:
            raise Malformed(f"objects nested more than {MAX_DEPTH} levels deep")
        kind, depth = n.get("kind"), depth + 1
        if kind == "none":
            return None
        if kind in ("bool", "int", "str"):
            return _typed(n.get("value"), {"bool": bool, "int": int, "str": str}[kind])
        if kind == "float":
            try:
                return float.fromhex(_typed(n.get("value"), str))
            except ValueError:
                raise Malformed("malformed float") from None
        if kind == "tuple":
            return tuple(self.node(v, key, depth) for v in _typed(n.get("items"), list))
        if key:
            raise Malformed(f"unsupported dict key kind {kind!r}")
        if kind == "list":
            return [self.node(v, False, depth) for v in _typed(n.get("items"), list)]
        if kind in _MAP_TYPES:
            pairs = _typed(n.get("items"), list)
            if not all(isinstance(p, list) and len(p) == 2 for p in pairs):
                raise Malformed("malformed mapping")
            out = _MAP_TYPES[kind]()
            for k, v in pairs:
                out[self.node(k, True, depth)] = self.node(v, False, depth)
            return out
        if kind == "tensor":
            return self.tensor(_typed(n.get("ref"), int))
        raise Malformed(f"unknown node kind {kind!r}")

    def tensor(self, ref: int) -> Tensor:
        """The tensor at `ref` of the manifest's table, read once however often referenced."""
        if ref in self.loaded:
            return self.loaded[ref]
        if not 0 <= ref < len(self.entries):
            raise Malformed("tensor reference out of range")
        t = _read_tensor(self.zf, self.entries[ref], self.map_location)
        self.loaded[ref] = t
        return t


def _typed(value: Any, kind: type) -> Any:
    if type(value) is not kind:
        raise Malformed(f"expected a JSON {kind.__name__} in the manifest")
    return value


def _read_tensor(zf: zipfile.ZipFile, entry: Any, map_location: Any) -> Tensor:
    if not isinstance(entry, dict):
        raise Malformed("malformed tensor entry")
    name = _typed(entry.get("file"), str)
    if name not in zf.NameToInfo:
        raise Malformed(f"array member {name!r} is missing")
    try:
        arr = read_npy(read_member(zf, name, zf.NameToInfo[name].file_size), _ARRAY_DTYPES)
    except Malformed as e:
        raise Malformed(f"bad array {name!r} ({e})") from None
    if from_numpy_dtype(arr.dtype).name != entry.get("dtype") or \
            list(arr.shape) != entry.get("shape"):
        raise Malformed(f"array {name!r} does not match its manifest entry")
    location = _typed(entry.get("device", "cpu"), str)
    requires_grad = _typed(entry.get("requires_grad", False), bool)
    parameter = _typed(entry.get("parameter", False), bool)
    if requires_grad and not from_numpy_dtype(arr.dtype).is_floating_point:
        raise Malformed(f"array {name!r}: only floating tensors can require grad")
    t = _placed(Tensor._make(arr), location, map_location)
    if parameter:
        return Parameter(t, requires_grad=requires_grad)
    if requires_grad:
        t.requires_grad_(True)
    return t


class _UserCodeError(Exception):
    """Carries an exception raised by `map_location` past the malformed-file mapping."""


def _placed(t: Tensor, location: str, map_location: Any) -> Tensor:
    try:
        return _place(t, location, map_location)
    except Exception as e:
        raise _UserCodeError(e) from e


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


def _read_manifest(zf: zipfile.ZipFile) -> dict:
    if MANIFEST not in zf.NameToInfo:
        raise Malformed("no hookgrad manifest (is it a torch.save or pickle file?)")
    with guarded("the manifest is not valid JSON"):
        manifest = json.loads(read_member(zf, MANIFEST, MAX_MANIFEST).decode("utf-8"))
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise Malformed("unknown format")
    if manifest.get("version") != VERSION:
        raise Malformed(f"unsupported checkpoint version {manifest.get('version')!r}")
    return manifest


def _load_checked(f: Any, map_location: Any) -> Any:
    with open_archive(f) as zf:
        manifest = _read_manifest(zf)
        entries = _typed(manifest.get("tensors"), list)
        with guarded("malformed manifest"):
            return _Decoder(zf, entries, map_location).node(manifest.get("root"))


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
    try:
        return _load_checked(f, map_location)
    except Malformed as e:
        raise _refuse(str(e)) from None
    except _UserCodeError as e:  # map_location's own error, unchanged
        raise e.args[0] from None
