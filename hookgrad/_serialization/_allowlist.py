"""What ``load(weights_only=True)`` may construct: PyTorch's default allowlist and the user's.

The default list has PyTorch's names (``torch._utils._rebuild_tensor_v2``, ``torch.Size``,
``collections.OrderedDict``, ...) resolved to hookgrad's objects. Users extend it with
`add_safe_globals` / the `safe_globals` context manager exactly as in PyTorch: an object is
listed under ``f"{obj.__module__}.{obj.__qualname__}"``, or under the name given in an
``(obj, "module.name")`` pair. A hookgrad class is listed under its PyTorch path as well, since
that is the name files carry (``add_safe_globals([hookgrad.nn.Linear])`` admits
``torch.nn.modules.linear.Linear``).
"""

from __future__ import annotations

import functools
import importlib
import pickle
from _codecs import encode
from collections import Counter, OrderedDict
from typing import Any

from hookgrad import _backend, _dtypes
from hookgrad._serialization import _class_paths, _dtypes_map, _rebuild
from hookgrad._tensor import Tensor
from hookgrad.nn.parameter import Parameter

__all__ = ["add", "get", "clear", "remove", "default_allowed", "user_allowed",
           "BLOCKED_MODULES", "MAX_BYTEARRAY"]

BLOCKED_MODULES = ("sys", "os", "posix", "nt")
MAX_BYTEARRAY = 1 << 30  # bytearray(n) from a pickle: refuse n beyond this (PyTorch has no cap)
_marked: set = set()


def add(safe: list) -> None:
    global _marked
    _marked = _marked.union(set(safe))


def get() -> list:
    return list(_marked)


def clear() -> None:
    global _marked
    _marked = set()


def remove(safe: list) -> None:
    global _marked
    _marked = _marked - set(safe)


def user_allowed() -> dict[str, Any]:
    """``name -> object`` of the user's safe globals (PyTorch's checks on malformed entries)."""
    rc: dict[str, Any] = {}
    for f in _marked:
        if isinstance(f, tuple):
            if len(f) != 2:
                raise ValueError("Expected tuple of length 2 (global, str of callable full "
                                 f"path), but got tuple of length: {len(f)}")
            if type(f[1]) is not str:
                raise TypeError("Expected second item in tuple to be str of callable full "
                                f"path, but got: {type(f[1])}")
            rc[f[1]] = f[0]
            continue
        module, name = f.__module__, f.__qualname__
        rc[f"{module}.{name}"] = f
        tmod, tname = _class_paths.torch_path(module, name)
        rc.setdefault(f"{tmod}.{tname}", f)
    return rc


class _Named:
    """A PyTorch constant hookgrad has no object for (``torch.per_tensor_affine``, ...)."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return self.name


def _bytearray(*args: Any) -> bytearray:
    if args and isinstance(args[0], int) and args[0] > MAX_BYTEARRAY:
        # PyTorch would allocate it; hookgrad's weights-only unpickler refuses the pickle
        raise pickle.UnpicklingError(f"bytearray of {args[0]} bytes requested by the pickle")
    return bytearray(*args)


def _top() -> Any:
    # ``hookgrad.strided`` and ``hookgrad.FloatTensor`` live in a module above this layer; by
    # the time anything is loaded the package is complete, so it is looked up then.
    return importlib.import_module("hookgrad")


def _get_layout(name: Any) -> Any:
    short = str(name).rpartition(".")[2]
    return getattr(_top(), short, _Named(str(name)))


_TENSOR_TYPES = ("BFloat16", "Bool", "Byte", "Char", "Double", "Float", "Half", "Int", "Long",
                 "Short")
_QSCHEMES = ("per_channel_affine", "per_channel_affine_float_qparams", "per_channel_symmetric",
             "per_tensor_affine", "per_tensor_symmetric")


@functools.lru_cache(maxsize=1)
def default_allowed() -> dict[str, Any]:
    """PyTorch 2.13's default weights-only allowlist, by name, as hookgrad objects."""
    rc: dict[str, Any] = {
        "collections.OrderedDict": OrderedDict, "collections.Counter": Counter,
        "torch.nn.parameter.Parameter": Parameter, "torch.serialization._get_layout": _get_layout,
        "torch.Size": _dtypes.Size, "torch.Tensor": Tensor, "torch.device": _backend.device,
        "_codecs.encode": encode, "builtins.bytearray": _bytearray, "builtins.set": set,
        "builtins.complex": complex,
        "torch._tensor._rebuild_from_type_v2": _rebuild.rebuild_from_type_v2,
    }
    for name, value in _dtypes_map.DTYPE_GLOBALS.items():
        if name not in ("half", "float", "double", "long", "int", "short", "cfloat", "cdouble"):
            rc[f"torch.{name}"] = value
    for name, storage in _dtypes_map.STORAGE_NAMES.items():
        rc[f"torch.{name}"] = storage
        if not name.startswith("Q"):
            rc[f"torch.cuda.{name}"] = storage
    rc["torch.storage.UntypedStorage"] = _dtypes_map.StorageType("UntypedStorage", "uint8")
    rc["torch.storage.TypedStorage"] = _dtypes_map.StorageType("TypedStorage", "uint8")
    for kind in _TENSOR_TYPES:
        name = f"{kind}Tensor"
        rc[f"torch.{name}"] = getattr(_top(), name, None) or _Named(f"torch.{name}")
        rc[f"torch.cuda.{name}"] = _Named(f"torch.cuda.{name}")
        if kind != "Bool":
            rc[f"torch.sparse.{name}"] = _Named(f"torch.sparse.{name}")
            rc[f"torch.cuda.sparse.{name}"] = _Named(f"torch.cuda.sparse.{name}")
    for q in _QSCHEMES:
        rc[f"torch.{q}"] = _Named(f"torch.{q}")
    for name, fn in _rebuild.REBUILDERS.items():
        if name != "_rebuild_xla_tensor":
            rc[f"torch._utils.{name}"] = fn
    return rc
