"""`TorchDispatchMode`: intercept every primitive call below the module level.

Layer 2 (listed in tests/test_architecture.py): `bind`/`bind_inplace` (``hookgrad/_dispatch.py``)
check one module-level counter, `ACTIVE`, and only when some mode is pushed call `dispatch`,
which hands the call to the innermost mode of the calling thread.

NOTE [Dispatch modes]
As in PyTorch, a mode is a context manager; while its ``__torch_dispatch__(func, types, args,
kwargs)`` runs, the mode is popped from the thread's stack, so calling ``func(*args, **kwargs)``
inside it runs the primitive (through any outer modes) instead of recursing. Differences, all
documented here:
- ``args`` are the primitive's tensor inputs in its order and ``kwargs`` its non-tensor
  parameters by name (PyTorch passes ATen's schema order); ``func`` is an `OpOverload` named
  ``aten.<name>.<overload>`` when the primitive has an ATen twin (``aten.addmm.default``,
  ``aten.add.Tensor``, ``aten.sum.dim_IntList``) and ``hookgrad.<name>.default`` otherwise.
  ``torch.ops.aten.mm.default`` is the same object, so identity checks work.
- Factory functions (``zeros``, ``randn``...) are not primitives and are not seen.
- While any mode is pushed a passive recorder is registered, so backward formulas run through
  `bind` (not on raw arrays) and a mode sees backward ops too, as PyTorch's modes do.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from hookgrad._backend import namespace_of
from hookgrad._config import add_recorder, remove_recorder
from hookgrad._ops.registry import PRIMITIVES
from hookgrad._tensor import Tensor

__all__ = [
    "TorchDispatchMode", "OpOverload", "OpOverloadPacket", "ops", "dispatch", "MISS",
    "_get_current_dispatch_mode", "_get_current_dispatch_mode_stack", "_disable_current_modes",
    "is_in_torch_dispatch_mode", "install",
]

ACTIVE = [0]  # modes pushed on any thread: the single check on bind's hot path
MISS = object()  # `dispatch` result meaning "no mode on this thread: run the op normally"
_local = threading.local()
_BINDS: list = []  # [bind, bind_inplace], installed by hookgrad/__init__ (see `install`)

# Primitives named differently from their ATen twin: name -> (aten name, overload).
_RENAMES = {
    "sum_dim": ("sum", "dim_IntList"), "mean_dim": ("mean", "dim"), "max_dim": ("max", "dim"),
    "min_dim": ("min", "dim"), "prod_dim_int": ("prod", "dim_int"),
    "squeeze_dim": ("squeeze", "dim"), "squeeze_dims": ("squeeze", "dims"),
    "div_mode": ("div", "Tensor_mode"), "pow_scalar": ("pow", "Scalar"),
    "pow_tensor": ("pow", "Tensor_Tensor"), "clamp_tensor": ("clamp", "Tensor"),
    "clamp_min_tensor": ("clamp_min", "Tensor"), "clamp_max_tensor": ("clamp_max", "Tensor"),
    "fill_scalar_": ("fill_", "Scalar"), "fill_tensor": ("fill", "Tensor"),
    "fmod_tensor": ("fmod", "Tensor"), "remainder_tensor": ("remainder", "Tensor"),
    "remainder_scalar": ("remainder", "Scalar"), "lerp_tensor": ("lerp", "Tensor"),
    "masked_fill_tensor": ("masked_fill", "Tensor"), "round_decimals": ("round", "decimals"),
    "scatter_value": ("scatter", "value"), "sort_stable": ("sort", "stable"),
    "_nn_add_scalar": ("add", "Tensor"), "_nn_mul_scalar": ("mul", "Tensor"),
    "_nn_div_scalar": ("div", "Tensor"),
}
# Primitives without an ATen twin (hookgrad-internal): they appear as ``hookgrad.<name>``.
_NO_TWIN = frozenset({
    "_matmul_squeeze_", "_rnn_transpose_", "clamp_tensor_max", "clamp_tensor_min",
    "topk_indices",
})
# Every ATen op and overload name of PyTorch 2.13 (tests/census/generate_aten_names.py writes
# the file). hookgrad computes most of them as composites of its primitives, so no mode ever
# sees them; tools still build tables keyed by them at import time (``aten.matmul``,
# ``aten._convolution``, ``aten._pin_memory.default``). Their packets and overloads exist for
# identity and lookups; calling one raises NotImplementedError.
_ATEN_NAMES_FILE = Path(__file__).with_name("aten_op_names.txt")
_ATEN_NAMES: dict[str, tuple[str, ...]] = {}


def _aten_names() -> dict[str, tuple[str, ...]]:
    if not _ATEN_NAMES:
        for line in _ATEN_NAMES_FILE.read_text().splitlines():
            name, *overloads = line.split()
            _ATEN_NAMES[name] = tuple(overloads)
    return _ATEN_NAMES


# ATen overload of the twins whose tensor call is not ``.default`` (PyTorch's schema names).
_OVERLOADS = {
    "add": "Tensor", "sub": "Tensor", "mul": "Tensor", "div": "Tensor", "rsub": "Tensor",
    "eq": "Tensor", "ne": "Tensor", "lt": "Tensor", "le": "Tensor", "gt": "Tensor",
    "ge": "Tensor", "bitwise_and": "Tensor", "bitwise_or": "Tensor", "bitwise_xor": "Tensor",
    "remainder": "Scalar", "fmod": "Scalar", "lerp": "Scalar", "masked_fill": "Scalar",
    "fill": "Scalar", "fill_": "Tensor", "copy_": "default", "index": "Tensor",
    "pow": "Tensor_Scalar", "scatter": "src", "select": "int", "slice": "Tensor",
    "sort": "default", "split": "Tensor", "transpose": "int", "unbind": "int",
    "unsafe_split": "Tensor", "where": "self",
}


# Primitives whose ATen schema takes all of the primitive's params positionally, in its order,
# after the tensors: modes see ``aten.convolution.default(x, w, b, [1, 1], ...)`` with no
# kwargs, as in PyTorch (ptflops' and fvcore's counters unpack ``args`` so). Value: the optional
# tensor inputs, which hookgrad passes as an empty placeholder and ATen as None.
_POSITIONAL = {"convolution": ("bias",)}


def _to_aten(prim: Any, inputs: tuple, params: dict) -> tuple[tuple, dict]:
    """A primitive call as ATen's ``(args, kwargs)``: int tuples shown as lists (``int[]``)."""
    optional = _POSITIONAL[prim.name]
    args = [None if name in optional and t.numel() == 0 else t
            for name, t in zip(prim.inputs, inputs)]
    for name in prim.params:
        v = params[name] if name in params else prim.defaults[name]
        args.append(list(v) if isinstance(v, tuple) else v)
    return tuple(args), {}


def _from_aten(prim: Any, args: tuple, kwargs: dict) -> tuple[tuple, dict]:
    """ATen's call (positional or by name) as the primitive's ``(inputs, params)``."""
    named = dict(zip(prim.inputs + prim.params, args))
    named.update(kwargs)
    first = named[prim.inputs[0]]
    inputs = []
    for name in prim.inputs:
        t = named.get(name)
        if t is None and name in _POSITIONAL[prim.name]:
            data = first._data
            t = Tensor._make(namespace_of(data).zeros((0,), dtype=data.dtype))
        inputs.append(t)
    params = {k: tuple(v) if isinstance(v, list) else v
              for k, v in named.items() if k in prim.params}
    return tuple(inputs), params


# Comparisons with a Python number are ``.Scalar`` calls in PyTorch (``x > 0``: aten.gt.Scalar);
# hookgrad passes the number as a wrapped 0-d tensor, and shows the call under that overload.
_SCALAR_OVERLOAD = frozenset({"eq", "ne", "lt", "le", "gt", "ge"})


def aten_identity(prim_name: str) -> tuple[str, str, str]:
    """``(namespace, op name, overload)`` under which `prim_name` is shown to modes."""
    if prim_name in _RENAMES:
        return ("aten",) + _RENAMES[prim_name]
    if prim_name in _NO_TWIN:
        return ("hookgrad", prim_name, "default")
    return ("aten", prim_name, _OVERLOADS.get(prim_name, "default"))


class OpOverload:
    """One primitive as an op object: call it to run the primitive.

    Mirrors: ``torch._ops.OpOverload`` (``str(op) == 'aten.mm.default'``, ``op.name() ==
    'aten::mm'``, ``op.overloadpacket``).
    """

    __slots__ = ("prim", "inplace", "overloadpacket", "_overloadname", "__name__")

    @property
    def _overloadpacket(self) -> OpOverloadPacket:
        return self.overloadpacket

    def __init__(self, prim: Any, packet: OpOverloadPacket, overload: str, inplace: bool) -> None:
        self.prim = prim
        self.inplace = inplace
        self.overloadpacket = packet
        self._overloadname = overload
        self.__name__ = f"{packet.__name__}.{overload}"

    @property
    def namespace(self) -> str:
        return self.overloadpacket._namespace

    def name(self) -> str:
        return f"{self.namespace}::{self.overloadpacket.__name__}" + (
            "" if self._overloadname == "default" else f".{self._overloadname}")

    def __repr__(self) -> str:
        return f"<OpOverload(op='{self.overloadpacket}', overload='{self._overloadname}')>"

    def __str__(self) -> str:
        return f"{self.overloadpacket}.{self._overloadname}"

    def __deepcopy__(self, memo: Any = None) -> OpOverload:
        return self  # an op is a singleton, compared by identity (as PyTorch's)

    def __copy__(self) -> OpOverload:
        return self

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        frame = _frames()[-1] if _frames() else None
        same = frame is not None and frame[0] is self.prim and frame[2] is self.inplace
        cast = frame[1] if same else None
        bind, bind_inplace = _BINDS
        if self.inplace:
            target = frame[3] if same else args[0]
            return bind_inplace(self.prim, target, args, kwargs, cast)
        if self.prim.name in _POSITIONAL:
            args, kwargs = _from_aten(self.prim, args, kwargs)
        return bind(self.prim, args, kwargs, cast)


class OpOverloadPacket:
    """All overloads of one op name (``torch.ops.aten.sum``). Mirrors: ``torch._ops.OpOverloadPacket``."""

    def __init__(self, namespace: str, name: str) -> None:
        self._namespace = namespace
        self.__name__ = name
        self._overloads: dict[str, OpOverload] = {}

    def overloads(self) -> list[str]:
        listed = _aten_names().get(self.__name__, ()) if self._namespace == "aten" else ()
        return list(self._overloads) + [o for o in listed if o not in self._overloads]

    def __getattr__(self, overload: str) -> OpOverload:
        # the messages read fields through __dict__: on a half-built copy (copy.copy,
        # pickle) they are missing, and formatting ``self`` would recurse back here
        d = self.__dict__
        name = f"{d.get('_namespace')}.{d.get('__name__')}"
        if overload.startswith("__"):
            raise AttributeError(f"'{name}' can't have an overload name beginning with '__' "
                                 f"and the underlying op has no attribute {overload} either.")
        try:
            return d["_overloads"][overload]
        except KeyError:
            if (d.get("_namespace") == "aten"
                    and overload in _aten_names().get(d.get("__name__"), ())):
                op = d["_overloads"][overload] = _UnbackedOverload(self, overload)
                return op
            raise AttributeError(
                f"The underlying op of '{name}' has no overload name '{overload}'") from None

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if not self._overloads:
            raise NotImplementedError(
                f"{self} is not a hookgrad primitive: hookgrad computes it from primitives, "
                "which is what dispatch modes see")
        return next(iter(self._overloads.values()))(*args, **kwargs)

    def __deepcopy__(self, memo: Any = None) -> OpOverloadPacket:
        return self  # one packet per op name (as PyTorch's; ptflops deep-copies op tables)

    def __copy__(self) -> OpOverloadPacket:
        # PyTorch's copy.copy of a packet never returns (its __getattr__ recurses on the
        # half-built copy); the op itself is the useful answer
        return self

    def __repr__(self) -> str:
        return f"<OpOverloadPacket(op='{self}')>"

    def __str__(self) -> str:
        return f"{self._namespace}.{self.__name__}"


class _UnbackedOverload(OpOverload):
    """An ATen overload hookgrad has no primitive for (it computes the op from primitives):
    named, compared and hashed like any op object, but not callable."""

    def __init__(self, packet: OpOverloadPacket, overload: str) -> None:
        super().__init__(None, packet, overload, overload.endswith("_") or
                         packet.__name__.endswith("_"))

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(
            f"{self} is not a hookgrad primitive: hookgrad computes it from primitives, which "
            "is what dispatch modes see")


class _OpNamespace:
    def __init__(self, name: str) -> None:
        self._name = name
        self._packets: dict[str, OpOverloadPacket] = {}

    def __getattr__(self, op: str) -> OpOverloadPacket:
        if op.startswith("__") and not (self._name == "aten" and op in _aten_names()):
            raise AttributeError(f"'_OpNamespace' object has no attribute '{op}'")
        _build_table()
        packets = self.__dict__["_packets"]
        if op not in packets and self._name == "aten" and op in _aten_names():
            packets[op] = OpOverloadPacket("aten", op)
        try:
            return packets[op]
        except KeyError:
            raise AttributeError(f"'_OpNamespace' '{self._name}' object has no attribute "
                                 f"'{op}'") from None


class _Ops:
    """``torch.ops``: namespaces ``aten`` and ``hookgrad`` of primitive op objects, and any other
    namespace on first access (empty until ``library.custom_op`` defines ops in it).

    Mirrors: ``torch._ops._Ops``.
    """

    def __init__(self) -> None:
        self.aten = _OpNamespace("aten")
        self.hookgrad = _OpNamespace("hookgrad")
        self.loaded_libraries: set[str] = set()

    def __getattr__(self, name: str) -> _OpNamespace:
        if name.startswith("__"):
            raise AttributeError(f"'_Ops' object has no attribute '{name}'")
        space = _OpNamespace(name)
        setattr(self, name, space)
        return space

    def load_library(self, path: str) -> None:
        """Refuse a PyTorch C++ extension library with PyTorch's error for one it cannot load.

        Such a library registers its operators with PyTorch's C++ dispatcher, which hookgrad
        does not have; loading it would run foreign native code for nothing. Libraries such as
        torchvision catch this ``OSError`` and go on without their native operators.

        Mirrors: ``torch.ops.load_library``.
        """
        raise OSError(f"Could not load this library: {path} (hookgrad cannot load PyTorch C++ "
                      "extension libraries)")


ops = _Ops()
_BY_PRIM: dict[tuple[int, bool], OpOverload] = {}


def _register(prim: Any, inplace: bool, scalar: bool = False) -> OpOverload:
    ns, name, overload = aten_identity(prim.name)
    if scalar:
        overload = "Scalar"
    if inplace and not name.endswith("_"):
        name += "_"
    space = getattr(ops, ns).__dict__["_packets"]
    packet = space.setdefault(name, OpOverloadPacket(ns, name))
    op = packet._overloads.get(overload)
    if op is None or op.prim is not prim:
        op = packet._overloads[overload] = OpOverload(prim, packet, overload, inplace)
    _BY_PRIM[(id(prim), inplace) if not scalar else (id(prim), inplace, True)] = op
    return op


_BUILT_FOR = [0]  # len(PRIMITIVES) when the namespace table was last completed


def _build_table() -> None:
    # Registered lazily: every primitive is defined by the time anyone looks an op up.
    if _BUILT_FOR[0] != len(PRIMITIVES):
        for prim in PRIMITIVES.values():
            if (id(prim), False) not in _BY_PRIM:
                _register(prim, False)
        _BUILT_FOR[0] = len(PRIMITIVES)


def overload_of(prim: Any, inplace: bool = False, inputs: tuple = ()) -> OpOverload:
    """The op object under which `prim` (called on `inputs`) is shown to modes."""
    if (prim.name in _SCALAR_OVERLOAD and len(inputs) == 2
            and getattr(inputs[1], "_wrapped_number", False)):
        op = _BY_PRIM.get((id(prim), inplace, True))
        return op if op is not None else _register(prim, inplace, scalar=True)
    op = _BY_PRIM.get((id(prim), inplace))
    return op if op is not None else _register(prim, inplace)


# ------------------------------------------------------------------------------ mode stack
def _stack() -> list:
    st = getattr(_local, "stack", None)
    if st is None:
        st = _local.stack = []
    return st


def _frames() -> list:
    fr = getattr(_local, "frames", None)
    if fr is None:
        fr = _local.frames = []
    return fr


class _PassiveRecorder:
    """On a thread's recorder stack while it has a mode pushed: asks the engine to run backward
    rules with hookgrad ops (``sees_backward``), so modes see backward ops (NOTE above)."""

    sees_backward = True

    def record(self, prim: Any, inputs: tuple, params: dict, outputs: tuple,
               cast: Any = None) -> None:
        pass

    def record_inplace(self, prim: Any, inputs: tuple, params: dict, out: Any, target: Any,
                       cast: Any = None) -> None:
        pass

    def rebase(self, target: Any, out: Any) -> None:
        pass

    def record_write(self, target: Any) -> None:
        pass

    def record_function(self, fn_cls: Any, inputs: tuple, outputs: tuple) -> None:
        pass


_PASSIVE = _PassiveRecorder()
_COUNT_LOCK = threading.Lock()


def _push(mode: TorchDispatchMode) -> None:
    st = _stack()
    if not st:
        add_recorder(_PASSIVE)  # recorder stacks are per thread, like the mode stacks
    st.append(mode)
    with _COUNT_LOCK:
        ACTIVE[0] += 1


def _pop(mode: TorchDispatchMode) -> None:
    st = _stack()
    if st and st[-1] is mode:
        st.pop()
    else:
        st.remove(mode)
    if not st:
        remove_recorder(_PASSIVE)
    with _COUNT_LOCK:
        ACTIVE[0] -= 1


class TorchDispatchMode:
    """Base class of modes that see every primitive call (NOTE [Dispatch modes]).

    Subclasses define ``__torch_dispatch__(self, func, types, args=(), kwargs=None)`` and
    usually end with ``return func(*args, **(kwargs or {}))``.

    Example:
        >>> import hookgrad as torch
        >>> from hookgrad.utils._python_dispatch import TorchDispatchMode
        >>> class Log(TorchDispatchMode):
        ...     def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        ...         print(func)
        ...         return func(*args, **(kwargs or {}))
        >>> with Log():
        ...     _ = torch.ones(2, 3) @ torch.ones(3)
        aten.mv.default

    Mirrors: ``torch.utils._python_dispatch.TorchDispatchMode``.
    """

    def __torch_dispatch__(self, func: OpOverload, types: tuple, args: tuple = (),
                           kwargs: dict | None = None) -> Any:
        raise NotImplementedError

    def __enter__(self) -> TorchDispatchMode:
        _push(self)
        return self

    def __exit__(self, *exc: object) -> None:
        _pop(self)

    @classmethod
    def push(cls, *args: Any, **kwargs: Any) -> TorchDispatchMode:
        return cls(*args, **kwargs)


def dispatch(prim: Any, inputs: tuple, params: dict, cast: Any, target: Any = None) -> Any:
    """Hand one primitive call to the thread's innermost mode, or return `MISS`."""
    stack = _stack()
    if not stack:
        return MISS
    mode = stack.pop()
    inplace = target is not None
    frames = _frames()
    frames.append((prim, cast, inplace, target))
    try:
        func = overload_of(prim, inplace, inputs)
        types = tuple({type(t) for t in inputs if isinstance(t, Tensor)}) or (Tensor,)
        args, kwargs = ((tuple(inputs), dict(params)) if inplace or prim.name not in _POSITIONAL
                        else _to_aten(prim, inputs, params))
        return mode.__torch_dispatch__(func, types, args, kwargs)
    finally:
        frames.pop()
        stack.append(mode)


def install(bind: Any, bind_inplace: Any) -> None:
    """Give op objects the entry points they call (done once by ``hookgrad/__init__``)."""
    _BINDS[:] = [bind, bind_inplace]


def _get_current_dispatch_mode() -> TorchDispatchMode | None:
    """The thread's innermost mode. Mirrors: ``torch.utils._python_dispatch._get_current_dispatch_mode``."""
    st = _stack()
    return st[-1] if st else None


def _get_current_dispatch_mode_stack() -> list:
    """The thread's modes, outermost first. Mirrors: ``_get_current_dispatch_mode_stack``."""
    return list(_stack())


def is_in_torch_dispatch_mode() -> bool:
    """Whether the thread has a mode pushed. Mirrors: ``is_in_torch_dispatch_mode``."""
    return bool(_stack())


@contextmanager
def _disable_current_modes() -> Iterator[list]:
    """Pop every mode of the thread for the duration. Mirrors: ``_disable_current_modes``."""
    saved = list(_stack())
    for m in reversed(saved):
        _pop(m)
    try:
        yield saved
    finally:
        for m in saved:
            _push(m)


def is_traceable_wrapper_subclass(t: Any) -> bool:
    """A Tensor subclass implementing ``__tensor_flatten__``/``__tensor_unflatten__``.

    Mirrors: ``torch.utils._python_dispatch.is_traceable_wrapper_subclass``.
    """
    is_subclass = isinstance(t, Tensor) and type(t) is not Tensor
    return (is_subclass and hasattr(t, "__tensor_flatten__")
            and hasattr(t, "__tensor_unflatten__"))
