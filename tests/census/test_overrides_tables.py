"""Oracle tests for ``torch.overrides``' tables and dispatch helpers (issue 21's census)."""

from __future__ import annotations

import importlib
import inspect

import pytest

import hookgrad
from tests.census._both import error_of

pytestmark = pytest.mark.oracle




def test_modes_resolve_classify_and_redispatch_as_pytorch(torch):
    def scenario(L):
        o = L.overrides
        log = []

        class Mode(o.TorchFunctionMode):
            def __init__(self, reenter):
                super().__init__()
                self.reenter = reenter

            def __torch_function__(self, func, types, args, kwargs=None):
                log.append((o.resolve_name(func), o.is_tensor_method_or_property(func)))
                if self.reenter:
                    with self:
                        return o.redispatch_function(func, types, args, kwargs)
                return o.redispatch_function(func, types, args, kwargs)

        x = L.ones(2)
        out = []
        for reenter in (False, True):
            with Mode(reenter):
                out.append((x.mul(2), L.add(x, 1), L.linalg.vector_norm(x)))
        return log, [[t.tolist() for t in ts] for ts in out]
    assert scenario(hookgrad) == scenario(torch)


def test_enable_reentrant_dispatch_only_inside_a_dispatch_handler(torch):
    def scenario(L):
        o = L.overrides
        base = importlib.import_module(L.__name__ + ".utils._python_dispatch").TorchDispatchMode
        seen = []

        class Mode(base):
            def __torch_dispatch__(self, func, types, args, kwargs=None):
                with o.enable_reentrant_dispatch():
                    seen.append(func.__name__)
                return func(*args, **(kwargs or {}))

        x = L.ones(2)
        with Mode():
            y = (x * 3).sum()
        return seen, y.item(), error_of(lambda: o.enable_reentrant_dispatch().__enter__())
    assert scenario(hookgrad) == scenario(torch)


def _names(L):
    o = L.overrides
    return {o.resolve_name(f) for f in o.get_ignored_functions()} - {None}


def test_ignored_functions_are_pytorchs(torch):
    ours, theirs = _names(hookgrad), _names(torch)
    # hookgrad may print a shared object under another of PyTorch's paths: compare last parts
    # (and lists its own Tensor internals, which PyTorch's tensor does not have at all)
    from hookgrad._overrides_tables import HOOKGRAD_TENSOR_INTERNALS

    internals = set(HOOKGRAD_TENSOR_INTERNALS.split()) | {"__get__"}
    assert {n.rsplit(".", 1)[-1] for n in ours} - internals <= {
        n.rsplit(".", 1)[-1] for n in theirs} | {"set_grad_enabled"}
    for name in ("torch.tensor", "torch.zeros", "torch.is_tensor", "torch.manual_seed",
                 "torch.nn.init.calculate_gain", "torch.Tensor.new_zeros", "torch.fft.fftfreq"):
        assert name in theirs and name in ours, name
    assert "torch.add" not in ours and "torch.add" not in theirs


@pytest.mark.parametrize("path,name,listed", [
    ("", "add", True), ("", "matmul", True), ("", "tensor", False), ("", "relu_", False),
    ("nn.functional", "linear", True), ("nn.functional", "sigmoid", False),
    ("linalg", "vector_norm", True), ("special", "erf", True), ("fft", "fftfreq", False),
    ("Tensor", "add", True), ("Tensor", "new_zeros", False), ("nn.init", "normal_", False),
])
def test_overridable_functions_agree_with_pytorch(torch, path, name, listed):
    def lookup(L):
        ns = L
        for part in path.split(".") if path else ():
            ns = getattr(ns, part)
        table = L.overrides.get_overridable_functions()
        return any(f is getattr(ns, name) for f in table.get(ns, ()))
    assert lookup(torch) is listed
    assert lookup(hookgrad) is listed


def test_testing_overrides_are_dummies_of_the_same_signature(torch):
    for L in (torch, hookgrad):
        overrides = L.overrides.get_testing_overrides()
        F = L.nn.functional
        for fn in (F.linear, F.dropout, L.Tensor.add):
            dummy = overrides[fn]
            params = list(inspect.signature(dummy).parameters)
            assert params[:2] == (["input", "weight"] if fn is F.linear else params[:2])
        assert overrides[F.linear](L.ones(1, 2), L.ones(3, 2)) == -1
        assert L.tensor not in overrides
        listed = {f for fs in L.overrides.get_overridable_functions().values() for f in fs}
        assert L.add in overrides and L.tensor not in listed
        assert L is torch or set(overrides) == listed
    ours = hookgrad.overrides.get_testing_overrides()
    assert ours is not hookgrad.overrides.get_testing_overrides()  # a fresh dict, as PyTorch's


def test_default_nowrap_functions_hold_the_grad_getter(torch):
    for L in (torch, hookgrad):
        nowrap = L.overrides.get_default_nowrap_functions()
        assert L.Tensor.grad.__get__ in nowrap
        assert L.overrides.is_tensor_method_or_property(L.Tensor.grad.__get__)
