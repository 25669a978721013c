"""The restricted unpickler of ``load(weights_only=True)``: PyTorch's rules, own code.

It interprets only the pickle opcodes of protocol 2 that ``torch.save`` emits, never imports
anything, and pushes a global only when its name is on the allowlist (`_allowlist`): PyTorch's
defaults, resolved to hookgrad objects, plus the user's ``add_safe_globals``. It calls
(``REDUCE``), instantiates (``NEWOBJ``) and fills (``BUILD``) only allowlisted objects, appends
and sets items only on lists and dicts, and loads persistent ids only for storages. Every
refusal is a ``pickle.UnpicklingError`` with PyTorch's text; `load` wraps it with PyTorch's
hint (`_errors.weights_only_message`).
"""

from __future__ import annotations

import pickle
import warnings
from collections import Counter, OrderedDict
from collections.abc import Callable
from struct import unpack
from sys import maxsize
from typing import Any

import numpy as np

from hookgrad._serialization import _allowlist, _module_state
from hookgrad._serialization._rebuild import _set_state
from hookgrad._tensor import Tensor
from hookgrad.nn.parameter import Parameter

__all__ = ["Unpickler", "globals_in_pickle", "read_global"]

UnpicklingError = pickle.UnpicklingError
_IMPORT_MAPPING = {"__builtin__": "builtins", "copy_reg": "copyreg", "Queue": "queue",
                   "repr": "reprlib", "_abcoll": "collections.abc", "UserDict": "collections",
                   "UserList": "collections", "UserString": "collections",
                   "whichdb": "dbm", "StringIO": "io", "cStringIO": "io"}
_NAME_MAPPING = {("__builtin__", "xrange"): ("builtins", "range"),
                 ("__builtin__", "reduce"): ("functools", "reduce"),
                 ("__builtin__", "intern"): ("sys", "intern"),
                 ("__builtin__", "unichr"): ("builtins", "chr"),
                 ("__builtin__", "unicode"): ("builtins", "str"),
                 ("__builtin__", "long"): ("builtins", "int"),
                 ("itertools", "izip"): ("builtins", "zip"),
                 ("itertools", "imap"): ("builtins", "map"),
                 ("itertools", "ifilter"): ("builtins", "filter"),
                 ("itertools", "ifilterfalse"): ("itertools", "filterfalse"),
                 ("itertools", "izip_longest"): ("itertools", "zip_longest"),
                 ("UserDict", "IterableUserDict"): ("collections", "UserDict"),
                 ("UserList", "UserList"): ("collections", "UserList"),
                 ("UserString", "UserString"): ("collections", "UserString"),
                 ("__builtin__", "basestring"): ("builtins", "str"),
                 ("exceptions", "StandardError"): ("builtins", "Exception"),
                 ("UserDict", "UserDict"): ("collections", "UserDict")}
_NJT = ("torch.nested._internal.nested_tensor.NestedTensor",
        "torch.nested._internal.nested_tensor._rebuild_njt", "torch._dynamo.decorators._DimRange")
_DTENSOR = ("torch.distributed.device_mesh.DeviceMesh",
            "torch.distributed.tensor._dtensor_spec.DTensorSpec",
            "torch.distributed.tensor._dtensor_spec.TensorMeta",
            "torch.distributed.tensor.DTensor",
            "torch.distributed.tensor.placement_types.Partial",
            "torch.distributed.tensor.placement_types.Replicate",
            "torch.distributed.tensor.placement_types.Shard")


def read_global(readline: Callable) -> tuple[str, str]:
    """The ``(module, name)`` of a GLOBAL opcode, Python 2 names mapped as pickle does."""
    module = readline()[:-1].decode("utf-8")
    name = readline()[:-1].decode("utf-8")
    if (module, name) in _NAME_MAPPING:
        module, name = _NAME_MAPPING[(module, name)]
    elif module in _IMPORT_MAPPING:
        module = _IMPORT_MAPPING[module]
    return module, name


def _unsupported_global(full_path: str) -> UnpicklingError:
    if full_path.startswith("builtins"):
        rest = full_path[len("builtins"):]
        full_path = rest[1:] if rest.startswith(".") else "builtins" + rest
    return UnpicklingError(
        f"Unsupported global: GLOBAL {full_path} was not an allowed global by default. "
        f"Please use `torch.serialization.add_safe_globals([{full_path}])` or the "
        f"`torch.serialization.safe_globals([{full_path}])` context manager to allowlist this "
        "global if you trust this class/function.")


def _read_exact(read: Callable, n: int) -> bytes:
    # Fixed-size fields are read as PyTorch's unpickler reads them (a short read fails in
    # ``unpack`` with struct.error, an absent byte with IndexError); variable-size data must
    # be all there.
    data = read(n)
    if len(data) != n:
        raise EOFError("pickle data was truncated")
    return data


class Unpickler:
    """Mirrors: ``torch._weights_only_unpickler.Unpickler`` (hookgrad objects, same rules)."""

    def __init__(self, file: Any, *, encoding: str = "bytes",
                 persistent_load: Callable | None = None) -> None:
        self.encoding = encoding
        self.readline, self.read = file.readline, file.read
        self.memo: dict[int, Any] = {}
        self.proto = -1
        self.allowed = _allowlist.default_allowed()
        self.user = _allowlist.user_allowed()
        self._values = list(self.allowed.values()) + list(self.user.values())
        self._ids = {id(v) for v in self._values}  # the fast path: allowlisted objects are
        # singletons (classes, functions, dtypes), so identity settles almost every check
        self._persistent = persistent_load
        self.stack: list[Any] = []
        self.metastack: list[list[Any]] = []

    def _is_allowed(self, obj: Any) -> bool:
        if id(obj) in self._ids:
            return True
        return any(obj is v or (type(obj) is type(v) and obj == v) for v in self._values)

    def load(self) -> Any:
        """Run the pickle to its STOP opcode and return the object it built."""
        while True:
            key = self.read(1)
            if not key:
                raise EOFError
            op = key[0]
            handler = _DISPATCH.get(op)
            if handler is None:
                raise UnpicklingError(f"Unsupported operand {op}")
            if handler(self):
                return self.stack.pop()

    # ---------------------------------------------------------------- opcode handlers
    def _global(self) -> None:
        module, name = read_global(self.readline)
        full_path = f"{module}.{name}"
        if module in _allowlist.BLOCKED_MODULES:
            raise UnpicklingError(f"Trying to load unsupported GLOBAL {full_path} whose module "
                                  f"{module} is blocked.")
        if full_path in self.allowed:
            self.stack.append(self.allowed[full_path])
        elif full_path in self.user:
            self.stack.append(self.user[full_path])
        elif full_path in _NJT:
            raise UnpicklingError("``torch.nested`` and ``torch._dynamo`` must be imported to "
                                  "load nested jagged tensors (NJTs)")
        elif full_path in _DTENSOR:
            raise UnpicklingError("``torch.distributed.tensor`` must be imported to load "
                                  "DTensors")
        else:
            raise _unsupported_global(full_path)

    def _newobj(self) -> None:
        args = self.stack.pop()
        cls = self.stack.pop()
        if cls is Parameter:
            self.stack.append(Parameter(*args))
        elif self._is_allowed(cls) and isinstance(cls, type):
            if issubclass(cls, Tensor):
                if args:  # ``Tensor(n)`` would allocate what the file never held
                    raise UnpicklingError(f"Can only create empty tensors, got {cls}{args}")
                self.stack.append(cls._make(np.empty((0,), np.float32)))
            else:
                self.stack.append(cls.__new__(cls, *args))
        else:
            raise UnpicklingError("Can only create new object for nn.Parameter or classes "
                                  f"allowlisted via `add_safe_globals` but got {cls}")

    def _reduce(self) -> None:
        args = self.stack.pop()
        func = self.stack[-1]
        if not self._is_allowed(func) or not callable(func):
            msg = f"Trying to call reduce for unrecognized function {func}"
            if hasattr(func, "__self__"):
                msg += f" which belongs to {func.__self__}"
            raise UnpicklingError(msg)
        if type(args) is not tuple:
            raise UnpicklingError(f"REDUCE arguments must be a tuple, got {type(args)}")
        self.stack[-1] = func(*args)

    def _build(self) -> None:
        state = self.stack.pop()
        inst = self.stack[-1]
        if type(inst) is Tensor:
            inst.set_(*state)  # legacy unpickling; set_ checks the layout
        elif type(inst) is Parameter or type(inst) is OrderedDict:
            _set_state(inst, state)
        elif self._is_allowed(type(inst)):
            if _module_state.is_module(inst):
                _module_state.restore(inst, state)
            elif getattr(type(inst), "__setstate__", None) is not None:
                inst.__setstate__(state)
            else:
                _set_state(inst, state)
        else:
            raise UnpicklingError("Can only build Tensor, Parameter, OrderedDict or types "
                                  f"allowlisted via `add_safe_globals`, but got {type(inst)}")

    def _append(self) -> None:
        item = self.stack.pop()
        if type(self.stack[-1]) is not list:
            raise UnpicklingError(f"Can only append to lists, but got {type(self.stack[-1])}")
        self.stack[-1].append(item)

    def _appends(self) -> None:
        items = self._pop_mark()
        if type(self.stack[-1]) is not list:
            raise UnpicklingError(f"Can only extend lists, but got {type(self.stack[-1])}")
        self.stack[-1].extend(items)

    def _check_set_item_target(self, opcode: str) -> None:
        if type(self.stack[-1]) not in (dict, OrderedDict, Counter):
            raise UnpicklingError(f"Can only {opcode} for dict, collections.OrderedDict, "
                                  f"collections.Counter, but got {type(self.stack[-1])}")

    def _setitem(self) -> None:
        v, k = self.stack.pop(), self.stack.pop()
        self._check_set_item_target("SETITEM")
        self.stack[-1][k] = v

    def _setitems(self) -> None:
        items = self._pop_mark()
        self._check_set_item_target("SETITEMS")
        if len(items) % 2:
            raise UnpicklingError("SETITEMS needs key/value pairs")
        for i in range(0, len(items), 2):
            self.stack[-1][items[i]] = items[i + 1]

    def _mark(self) -> None:
        self.metastack.append(self.stack)
        self.stack = []

    def _pop_mark(self) -> list[Any]:
        items = self.stack
        self.stack = self.metastack.pop()
        return items

    def _tuple(self) -> None:
        items = tuple(self._pop_mark())  # before touching self.stack: it changes here
        self.stack.append(items)

    def _tuple_n(self, n: int) -> None:
        if n == 0:
            self.stack.append(())
        else:
            if len(self.stack) < n:
                raise IndexError("pop from empty stack")
            self.stack[-n:] = [tuple(self.stack[-n:])]

    def _binunicode(self) -> None:
        strlen = unpack("<I", self.read(4))[0]
        if strlen > maxsize:
            raise UnpicklingError("String is too long")
        self.stack.append(str(_read_exact(self.read, strlen), "utf-8", "surrogatepass"))

    def _short_binstring(self) -> None:
        data = _read_exact(self.read, self.read(1)[0])
        if self.encoding != "bytes":
            data = data.decode(self.encoding, "strict")
        self.stack.append(data)

    def _binpersid(self) -> None:
        pid = self.stack.pop()
        if type(pid) is not tuple and type(pid) is not int:
            raise UnpicklingError(f"persistent_load id must be tuple or int, but got {type(pid)}")
        if type(pid) is tuple and len(pid) > 0 and _ascii(pid[0]) != "storage":
            raise UnpicklingError("Only persistent_load of storage is allowed, but got "
                                  f"{type(pid[0])}")
        if self._persistent is None:
            raise UnpicklingError("unsupported persistent id encountered")
        self.stack.append(self._persistent(pid))

    def _get(self, long: bool) -> None:
        idx = unpack("<I", self.read(4))[0] if long else self.read(1)[0]
        self.stack.append(self.memo[idx])

    def _put(self, long: bool) -> None:
        idx = unpack("<I", self.read(4))[0] if long else self.read(1)[0]
        self.memo[idx] = self.stack[-1]

    def _proto(self) -> None:
        self.proto = self.read(1)[0]
        if self.proto != 2:
            warnings.warn(
                f"Detected pickle protocol {self.proto} in the checkpoint, which was not the "
                "default pickle protocol used by `torch.load` (2). The weights_only Unpickler "
                "might not support all instructions implemented by this protocol, please file "
                "an issue for adding support if you encounter this.", stacklevel=4)


def _ascii(value: Any) -> Any:
    return value.decode("ascii") if isinstance(value, bytes) else value


def _push(value_fn: Callable[[Unpickler], Any]) -> Callable[[Unpickler], None]:
    return lambda u: u.stack.append(value_fn(u))


_P = pickle
_DISPATCH: dict[int, Callable[[Unpickler], Any]] = {
    _P.GLOBAL[0]: Unpickler._global, _P.NEWOBJ[0]: Unpickler._newobj,
    _P.REDUCE[0]: Unpickler._reduce, _P.BUILD[0]: Unpickler._build,
    _P.APPEND[0]: Unpickler._append, _P.APPENDS[0]: Unpickler._appends,
    _P.SETITEM[0]: Unpickler._setitem, _P.SETITEMS[0]: Unpickler._setitems,
    _P.MARK[0]: Unpickler._mark,
    _P.TUPLE[0]: Unpickler._tuple,
    _P.TUPLE1[0]: lambda u: u._tuple_n(1), _P.TUPLE2[0]: lambda u: u._tuple_n(2),
    _P.TUPLE3[0]: lambda u: u._tuple_n(3), _P.EMPTY_TUPLE[0]: lambda u: u._tuple_n(0),
    _P.NONE[0]: _push(lambda u: None), _P.NEWFALSE[0]: _push(lambda u: False),
    _P.NEWTRUE[0]: _push(lambda u: True), _P.EMPTY_LIST[0]: _push(lambda u: []),
    _P.EMPTY_DICT[0]: _push(lambda u: {}), _P.EMPTY_SET[0]: _push(lambda u: set()),
    _P.BININT[0]: _push(lambda u: unpack("<i", u.read(4))[0]),
    _P.BININT1[0]: _push(lambda u: u.read(1)[0]),
    _P.BININT2[0]: _push(lambda u: unpack("<H", u.read(2))[0]),
    _P.BINFLOAT[0]: _push(lambda u: unpack(">d", u.read(8))[0]),
    _P.BINUNICODE[0]: Unpickler._binunicode, _P.SHORT_BINSTRING[0]: Unpickler._short_binstring,
    _P.BINPERSID[0]: Unpickler._binpersid,
    _P.BINGET[0]: lambda u: u._get(False), _P.LONG_BINGET[0]: lambda u: u._get(True),
    _P.BINPUT[0]: lambda u: u._put(False), _P.LONG_BINPUT[0]: lambda u: u._put(True),
    _P.LONG1[0]: _push(lambda u: _P.decode_long(
        _read_exact(u.read, u.read(1)[0]))),
    _P.PROTO[0]: Unpickler._proto,
    _P.STOP[0]: lambda u: True,
}

# opcode -> argument bytes to skip, for the static scan of `globals_in_pickle`
_SKIP = {op: 0 for op in (_P.NEWOBJ, _P.REDUCE, _P.BUILD, _P.APPEND, _P.APPENDS, _P.SETITEM,
                          _P.SETITEMS, _P.MARK, _P.TUPLE, _P.TUPLE1, _P.TUPLE2, _P.TUPLE3,
                          _P.NONE, _P.NEWFALSE, _P.NEWTRUE, _P.EMPTY_TUPLE, _P.EMPTY_LIST,
                          _P.EMPTY_DICT, _P.EMPTY_SET, _P.BINPERSID)}
_SKIP.update({_P.BININT: 4, _P.BININT1: 1, _P.BININT2: 2, _P.BINFLOAT: 8, _P.BINGET: 1,
              _P.LONG_BINGET: 4, _P.BINPUT: 1, _P.LONG_BINPUT: 4, _P.PROTO: 1})
_SKIP_BYTES = {op[0]: n for op, n in _SKIP.items()}


def globals_in_pickle(file: Any) -> set[str]:
    """Every GLOBAL a pickle names, found without running it.

    Mirrors: ``torch._weights_only_unpickler.get_globals_in_pkl``.
    """
    found: set[str] = set()
    while True:
        key = file.read(1)
        if not key:
            raise EOFError
        op = key[0]
        if op == _P.GLOBAL[0]:
            module, name = read_global(file.readline)
            found.add(f"{module}.{name}")
        elif op in _SKIP_BYTES:
            _read_exact(file.read, _SKIP_BYTES[op])
        elif op == _P.BINUNICODE[0]:
            _read_exact(file.read, unpack("<I", _read_exact(file.read, 4))[0])
        elif op in (_P.SHORT_BINSTRING[0], _P.LONG1[0]):
            _read_exact(file.read, _read_exact(file.read, 1)[0])
        elif op == _P.STOP[0]:
            return found
        else:
            raise UnpicklingError(f"Unsupported operand {op}")
