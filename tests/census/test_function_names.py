"""Function identity and ``__name__`` census: each public function is named, and shared, as in PyTorch.

Tools key dicts by function objects and log ``func.__name__`` (``__torch_function__`` modes,
activation loggers that wrap every name of a namespace). Two rules, checked against the
oracle for every callable of the namespaces tools wrap:
- names that are distinct objects in PyTorch are distinct objects in hookgrad (an alias that
  shares one object hides one of the two names from such a tool);
- ``__name__`` is PyTorch's (``Tensor.clip.__name__ == "clip"``, ``torch.linalg.inv.__name__
  == "linalg_inv"``).
"""

from __future__ import annotations

import inspect
import warnings

import pytest

import hookgrad

pytestmark = pytest.mark.oracle

NAMESPACES = ["", ".Tensor", ".nn.functional", ".linalg", ".special", ".fft", ".nn.init",
              ".autograd", ".distributions"]
# Tensor operators tools wrap along with the methods (``x *= 2`` is logged as ``__imul__``)
OPERATORS = {f"__{op}__" for base in (
    "add sub mul truediv floordiv mod pow matmul and or xor lshift rshift").split()
    for op in (base, "r" + base, "i" + base)} | {"__neg__", "__abs__", "__invert__", "__pos__",
                                                 "__getitem__", "__setitem__"}
# hookgrad's are modules that can be called (PyTorch's are functions); their name is the module's
NAME_DEPARTURES = {("", "compile"), (".autograd", "variable")}


def _callables(lib, path):
    ns = eval("lib" + path, {"lib": lib})  # noqa: S307 - a fixed dotted path
    out = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name in dir(ns):
            if name.startswith("__") and not (path == ".Tensor" and name in OPERATORS):
                continue
            try:
                value = getattr(ns, name)
            except Exception:  # noqa: BLE001 - a name that raises on access is not a function
                continue
            if callable(value) and not inspect.isclass(value) and not inspect.ismodule(value):
                out[name] = value
    return out


@pytest.mark.parametrize("path", NAMESPACES)
def test_functions_have_pytorchs_names_and_identities(torch, path):
    theirs, ours = _callables(torch, path), _callables(hookgrad, path)
    common = sorted(set(theirs) & set(ours))
    wrong_name = [(n, theirs[n].__name__, ours[n].__name__) for n in common
                  if hasattr(theirs[n], "__name__") and (path, n) not in NAME_DEPARTURES
                  and getattr(ours[n], "__name__", None) != theirs[n].__name__]
    merged = [(a, b) for i, a in enumerate(common) for b in common[i + 1:]
              if ours[a] is ours[b] and theirs[a] is not theirs[b]]
    assert wrong_name == []
    assert merged == []


def test_a_function_mode_sees_the_alias_that_was_called(torch):
    def scenario(L):
        from importlib import import_module

        log = []

        class Log(import_module(L.__name__ + ".overrides").TorchFunctionMode):
            def __torch_function__(self, func, types, args=(), kwargs=None):
                log.append(func.__name__)
                return func(*args, **(kwargs or {}))

        x, y = L.ones(2, 3), L.ones(2, 3)
        with Log():
            x.multiply(y), L.multiply(x, y), x.clip(0, 1), L.concat([x, y]), x.greater(y)
            L.special.expit(x), L.linalg.vector_norm(x), x.float(), x.swapdims(0, 1)
            L.fft.rfft(x), L.nn.functional.logsigmoid(x), x.divide(y), x.true_divide(y)
        return log

    assert scenario(hookgrad) == scenario(torch)


def test_all_is_torchs_all_less_what_hookgrad_lacks(torch):
    """``hookgrad.__all__`` lists ``torch.__all__`` in its order; ``import *`` gives those names."""
    assert hookgrad.__all__ == [n for n in torch.__all__ if hasattr(hookgrad, n)]
    assert len(hookgrad.__all__) > 900
    namespace: dict = {}
    exec("from hookgrad import *", namespace)  # noqa: S102 - the statement under test
    assert set(hookgrad.__all__) <= set(namespace)


def test_hookgrad_tensor_internals_are_listed_and_ignored(torch):
    """Tools skip what ``get_ignored_functions`` lists; hookgrad's private Tensor attributes
    (PyTorch's C++ tensor has none of them) are all there, so wrapping every overridable
    attribute never intercepts hookgrad's kernels from the inside."""
    from hookgrad._overrides_tables import HOOKGRAD_TENSOR_INTERNALS

    ours = {n for n in dir(hookgrad.Tensor)
            if n.startswith("_") and not n.startswith("__") and not hasattr(torch.Tensor, n)}
    assert ours == set(HOOKGRAD_TENSOR_INTERNALS.split())
    ignored = hookgrad.overrides.get_ignored_functions()
    assert hookgrad.Tensor._vc in ignored and hookgrad.Tensor._data.__get__ in ignored
