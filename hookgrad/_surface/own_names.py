"""Give every public alias its own function object, named as PyTorch names it.

In PyTorch ``torch.multiply`` and ``torch.mul`` are two objects, ``Tensor.clip.__name__`` is
``"clip"`` and ``torch.linalg.inv.__name__`` is ``"linalg_inv"``. Tools depend on that: a
``__torch_function__`` mode logs ``func.__name__``; activation loggers and profilers wrap
every name of a namespace in a dict keyed by the function, so two names sharing one object
make one of them invisible. hookgrad defines an alias by assignment (``multiply = mul``), which
shares the object, so after everything is installed this pass replaces each such alias with a
copy of the function (same code, defaults, closure and attributes; no wrapper, no extra call).
"""

from __future__ import annotations

import types
from typing import Any

__all__ = ["give_aliases_their_own_names"]

# Where PyTorch's ``__name__`` is not the attribute name (checked by tests/census/test_function_names.py).
TORCH_NAMES: dict[str, dict[str, str]] = {
    "hookgrad": {"sym_sqrt": "_sym_sqrt", "symeig": "_symeig", "to_dlpack": "_to_dlpack"},
    "hookgrad.nn.functional": {
        "has_torch_function": "_has_torch_function",
        "has_torch_function_unary": "_has_torch_function_unary",
        "has_torch_function_variadic": "_has_torch_function_variadic",
        "logsigmoid": "log_sigmoid", "threshold": "_threshold",
    },
    "hookgrad.autograd": {
        "has_torch_function": "_has_torch_function",
        "is_multithreading_enabled": "_is_multithreading_enabled",
        "is_view_replay_enabled": "_is_view_replay_enabled",
    },
}
# Tensor operators PyTorch defines as the very method object (``Tensor.__abs__ is Tensor.abs``)
SAME_AS = {"__abs__": "abs", "__neg__": "neg", "__pos__": "positive",
           "__itruediv__": "__idiv__", "__rtruediv__": "__rdiv__"}
# ... and operators PyTorch names after their method
TENSOR_NAMES = {"__pow__": "pow", "__ipow__": "pow_"}
# Namespaces whose functions are ATen operators in PyTorch, named with the namespace prefix.
PREFIXES = {"hookgrad.linalg": "linalg_", "hookgrad.special": "special_", "hookgrad.fft": "fft_"}


def renamed(fn: types.FunctionType, name: str, qualname: str) -> types.FunctionType:
    """A copy of `fn` under another name: same code object, globals, defaults and closure."""
    new = types.FunctionType(fn.__code__, fn.__globals__, name, fn.__defaults__, fn.__closure__)
    new.__kwdefaults__ = None if fn.__kwdefaults__ is None else dict(fn.__kwdefaults__)
    new.__dict__.update(fn.__dict__)
    new.__doc__ = fn.__doc__
    new.__module__ = fn.__module__
    new.__qualname__ = qualname
    new.__annotations__ = dict(getattr(fn, "__annotations__", {}))
    return new


def _rename_in(owner: Any, wanted: dict[str, str], qual_prefix: str, claimed: dict,
               dunders: bool = False) -> None:
    """Name each public function of `owner` as `wanted` says (else by its attribute).

    The first name that claims an object renames it in place, so objects PyTorch also shares
    between namespaces stay shared (``torch.to_dlpack is torch.utils.dlpack.to_dlpack``);
    a later name that wants another name for the same object gets its own copy.
    """
    namespace = vars(owner)
    items = [(a, v) for a, v in namespace.items() if isinstance(v, types.FunctionType) and (
        not a.startswith("_") or dunders and a.startswith("__") and a.endswith("__"))]
    # the attribute already carrying the object's name claims it first (``mul`` before ``multiply``)
    items.sort(key=lambda item: item[1].__name__ != wanted.get(item[0], item[0]))
    method_objects = {id(v) for a, v in items if not a.startswith("__")}
    for attr, value in items:
        name = wanted.get(attr, attr)
        owner_of_name = claimed.setdefault(id(value), (name, value))[0]
        # an operator is its own object even under its method's name (``__ipow__``/``pow_``)
        # unless PyTorch makes it the method itself (SAME_AS)
        shared_operator = (attr.startswith("__") and attr not in SAME_AS
                           and id(value) in method_objects)
        if owner_of_name == name and not shared_operator:
            if value.__name__ != name:
                value.__name__, value.__qualname__ = name, qual_prefix + name
        else:
            copy = renamed(value, name, qual_prefix + name)
            claimed[id(copy)] = (name, copy)
            setattr(owner, attr, copy)


def give_aliases_their_own_names() -> None:
    """Run once, after every install step has attached its names."""
    import sys  # noqa: PLC0415

    from hookgrad._tensor import Tensor  # noqa: PLC0415

    claimed: dict[int, tuple[str, Any]] = {}  # id -> (name, object kept alive for the id)
    # operators too: ``Tensor.__imul__`` and ``Tensor.mul_`` are two objects in PyTorch
    for operator, method in SAME_AS.items():
        if hasattr(Tensor, method) and hasattr(Tensor, operator):
            setattr(Tensor, operator, getattr(Tensor, method))
    _rename_in(Tensor, {**TENSOR_NAMES, **SAME_AS}, "Tensor.", claimed, dunders=True)
    for module_name in ("hookgrad", "hookgrad.nn.functional", "hookgrad.autograd"):
        module = sys.modules.get(module_name)
        if module is not None:
            _rename_in(module, TORCH_NAMES.get(module_name, {}), "", claimed)
    for module_name, prefix in PREFIXES.items():
        module = sys.modules.get(module_name)
        if module is None:
            continue
        public = set(getattr(module, "__all__", ())) | {n for n in vars(module) if not n.startswith("_")}
        _rename_in(module, {n: prefix + n for n in public}, "", claimed)
