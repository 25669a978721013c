"""Reading hookgrad's own archives of earlier versions (read-only compatibility).

Before hookgrad wrote PyTorch's format, `save` wrote this one; `load` still reads it.

File format (``hookgrad-checkpoint``, version 2)
-------------------------------------------------
A ZIP archive (members stored uncompressed) holding:

``hookgrad_checkpoint.json``
    UTF-8 JSON manifest::

        {"format": "hookgrad-checkpoint", "version": 2,
         "storages": [{"file": "storages/0.npy", "dtype": "float32", "numel": 10,
                       "device": "cpu"}, ...],
         "tensors": [{"storage": 0, "offset": 2, "shape": [3], "stride": [1],
                      "dtype": "float32", "requires_grad": false, "parameter": false}, ...],
         "root": <node>}

``storages/<n>.npy``
    One flat (1-D) array per distinct storage, in NumPy's ``.npy`` format written with
    ``allow_pickle=False`` (so object arrays cannot occur).

As in PyTorch, a tensor is written as its whole storage plus its element offset, sizes and
strides there (`hookgrad._storage_layout`): a ``[2:5]`` slice of a 10-element tensor writes 10
elements and loads with ``storage_offset() == 2``; tensors sharing a storage (a tensor and its
views, transposes, ``detach()``) write it once and load sharing one storage again, so in-place
writes through one are seen by the others, although none is an autograd view of another
(``_base is None``). Version 1 files (one ``arrays/<n>.npy`` per tensor, entries with ``file``
instead of ``storage``/``offset``/``stride``, nothing shared) are still read.

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

A tensor reachable several times is stored once and loads as one object. ``requires_grad``
and the ``nn.Parameter`` type are restored; autograd history is not.

Loading only parses JSON and ``.npy`` headers: nothing is unpickled and no code runs, so
``weights_only`` makes no difference. Reading goes through one bounded reader
(`hookgrad.utils._bounded_read`): members must be stored uncompressed, every storage (version
1: every tensor) has its own array member, and a ``.npy`` header's shape must match the bytes
actually present, so what is allocated is bounded by the size of the file; every tensor's
offset, sizes and strides must lie inside its storage. Any file that is not a well-formed
checkpoint (a pickle, a ``torch.save`` archive, flipped bits, truncation, compressed members,
objects nested more than `MAX_DEPTH` levels, an array whose dtype or shape disagrees with the
manifest) raises ``pickle.UnpicklingError``, the type torch's weights-only loader raises, with
the reason in its message. A missing or unreadable *path* raises the `OSError` ``open`` gives,
as in torch.
"""

from __future__ import annotations

import json
import zipfile
from collections import Counter, OrderedDict
from typing import Any

import numpy as np

from hookgrad import _backend
from hookgrad._dtypes import ALL_DTYPES, from_numpy_dtype
from hookgrad._serialization._torch_reader import UserCodeError
from hookgrad._storage_layout import tensor_on_storage
from hookgrad._tensor import Tensor
from hookgrad.nn.parameter import Parameter
from hookgrad.utils._bounded_read import Malformed, guarded, read_member, read_npy

__all__ = ["MANIFEST", "FORMAT", "load_archive"]

FORMAT = "hookgrad-checkpoint"
_READABLE_VERSIONS = (1, 2)
MANIFEST = "hookgrad_checkpoint.json"
_MAP_KINDS = {dict: "dict", OrderedDict: "ordered_dict", Counter: "counter"}
_MAP_TYPES = {kind: cls for cls, kind in _MAP_KINDS.items()}

MAX_DEPTH = 512  # nesting of the object tree; state dicts use a handful of levels
MAX_MANIFEST = 256 * 1024 * 1024
_ARRAY_DTYPES = frozenset(d.name for d in ALL_DTYPES)


class _Decoder:
    """Rebuilds the object tree from manifest nodes, reading each tensor once."""

    def __init__(self, zf: zipfile.ZipFile, manifest: dict, map_location: Any) -> None:
        self.zf, self.map_location = zf, map_location
        self.entries = _typed(manifest.get("tensors"), list)
        self.version = manifest["version"]
        self.storages = _typed(manifest.get("storages"), list) if self.version >= 2 else []
        self.flats: dict[int, Any] = {}  # storage index -> its loaded flat array
        self.loaded: dict[int, Tensor] = {}
        members = self.storages if self.version >= 2 else self.entries
        files = [e.get("file") if isinstance(e, dict) else None for e in members]
        if len(set(files)) != len(files):  # one array member per entry, as the writer makes
            raise Malformed("several entries share one array member")

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
        if self.version >= 2:
            t = self._stored_tensor(self.entries[ref])
        else:
            t = _read_tensor(self.zf, self.entries[ref], self.map_location)
        self.loaded[ref] = t
        return t

    def storage(self, i: int) -> tuple[Any, str]:
        """The flat array of storage `i` (read and placed once) and its saved device."""
        if not 0 <= i < len(self.storages) or not isinstance(self.storages[i], dict):
            raise Malformed("storage reference out of range")
        entry = self.storages[i]
        location = _typed(entry.get("device", "cpu"), str)
        if i not in self.flats:
            flat = _read_array(self.zf, _typed(entry.get("file"), str))
            if from_numpy_dtype(flat.dtype).name != entry.get("dtype") or flat.ndim != 1 or \
                    flat.size != _typed(entry.get("numel"), int):
                raise Malformed(f"array {entry['file']!r} does not match its manifest entry")
            if not callable(self.map_location):  # a callable gets each tensor instead
                flat = _placed(Tensor._make(flat), location, self.map_location)._data
            self.flats[i] = flat
        return self.flats[i], location

    def _stored_tensor(self, entry: Any) -> Tensor:
        """A version 2 tensor: a view of its (shared) storage, not an autograd view."""
        if not isinstance(entry, dict):
            raise Malformed("malformed tensor entry")
        flat, location = self.storage(_typed(entry.get("storage"), int))
        dtype = from_numpy_dtype(flat.dtype)
        if entry.get("dtype") != dtype.name:
            raise Malformed("a tensor's dtype differs from its storage's")
        offset = _typed(entry.get("offset"), int)
        shape, stride = (_int_list(entry.get(k)) for k in ("shape", "stride"))
        try:
            t = tensor_on_storage(flat, offset, shape, stride)
        except RuntimeError as e:
            raise Malformed(f"tensor layout outside its storage ({e})") from None
        if callable(self.map_location):
            t = _placed(t, location, self.map_location)
        return _finish(t, entry, dtype.is_floating_point)


def _typed(value: Any, kind: type) -> Any:
    if type(value) is not kind:
        raise Malformed(f"expected a JSON {kind.__name__} in the manifest")
    return value


def _int_list(value: Any) -> list:
    if type(value) is not list or any(type(v) is not int for v in value):
        raise Malformed("expected a JSON list of ints in the manifest")
    return value


def _read_array(zf: zipfile.ZipFile, name: str) -> np.ndarray:
    if name not in zf.NameToInfo:
        raise Malformed(f"array member {name!r} is missing")
    try:
        return read_npy(read_member(zf, name, zf.NameToInfo[name].file_size), _ARRAY_DTYPES)
    except Malformed as e:
        raise Malformed(f"bad array {name!r} ({e})") from None


def _read_tensor(zf: zipfile.ZipFile, entry: Any, map_location: Any) -> Tensor:
    """A version 1 tensor: its own array member."""
    if not isinstance(entry, dict):
        raise Malformed("malformed tensor entry")
    name = _typed(entry.get("file"), str)
    arr = _read_array(zf, name)
    if from_numpy_dtype(arr.dtype).name != entry.get("dtype") or \
            list(arr.shape) != entry.get("shape"):
        raise Malformed(f"array {name!r} does not match its manifest entry")
    location = _typed(entry.get("device", "cpu"), str)
    t = _placed(Tensor._make(arr), location, map_location)
    return _finish(t, entry, from_numpy_dtype(arr.dtype).is_floating_point)


def _finish(t: Tensor, entry: dict, floating: bool) -> Tensor:
    """Restore ``requires_grad`` and the ``Parameter`` type of a loaded tensor."""
    requires_grad = _typed(entry.get("requires_grad", False), bool)
    parameter = _typed(entry.get("parameter", False), bool)
    if requires_grad and not floating:
        raise Malformed("only floating tensors can require grad")
    if parameter:
        return Parameter(t, requires_grad=requires_grad)
    if requires_grad:
        t.requires_grad_(True)
    return t


def _placed(t: Tensor, location: str, map_location: Any) -> Tensor:
    try:
        return _place(t, location, map_location)
    except Exception as e:
        raise UserCodeError(e) from e


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
    version = manifest.get("version")
    if type(version) is not int or version not in _READABLE_VERSIONS:
        raise Malformed(f"unsupported checkpoint version {manifest.get('version')!r}")
    return manifest


def load_archive(zf: zipfile.ZipFile, map_location: Any) -> Any:
    """The object of a hookgrad archive (members already checked by the bounded reader)."""
    manifest = _read_manifest(zf)
    with guarded("malformed manifest"):
        return _Decoder(zf, manifest, map_location).node(manifest.get("root"))
