"""Intermediate hooks inside the generated backward (NOTE [Hooks in the generated backward]).

The hooks are traced into the graph (spec §8.3, compiled autograd off); the "inductor" program
must fire them on the intermediate's total gradient, in registration order, with eager's
replacement rules, and give PyTorch's gradients (``torch.compile`` and eager).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import hookgrad
from hookgrad.compile.joint import JointProgram
from tests.compile._libs import is_torch

X = np.random.default_rng(5).normal(size=(3, 4))


def _double(g: Any) -> Any:
    return g * 2


def _shift(g: Any) -> Any:
    return g + 1


def _fn(lib: Any) -> Any:
    def fn(x: Any) -> Any:
        a = (x * 1.5).tanh()
        early = a * 3            # reads `a` before its hooks are registered
        a.register_hook(_double)
        a.register_hook(_shift)  # sees _double's result
        b = (a.sin() + early).exp()
        b.register_hook(_double)
        return (b * a).sum()
    return fn


def _grad(lib: Any, fn: Any, dtype: str = "float64") -> np.ndarray:
    x = lib.tensor(X.astype(dtype), requires_grad=True)
    fn(x).backward()
    return x.grad.detach().numpy().copy()


@pytest.mark.parametrize("backend", ["inductor", "aot_eager"])
def test_hooks_fire_on_total_gradient_as_in_eager_and_torch(backend, torch):
    eager = _grad(hookgrad, _fn(hookgrad))
    opt = hookgrad.compile(_fn(hookgrad), backend=backend, fullgraph=True)
    for _ in range(3):
        got = _grad(hookgrad, opt)
        np.testing.assert_allclose(got, eager, rtol=1e-12)
    torch_backend = "eager" if is_torch(torch) else backend  # torch's aot_eager fails here
    oracle = _grad(torch, torch.compile(_fn(torch), backend=torch_backend, fullgraph=True))
    np.testing.assert_allclose(got, oracle, rtol=1e-10)
    np.testing.assert_allclose(got, _grad(torch, _fn(torch)), rtol=1e-10)
    program = opt._hookgrad_cache[0].artifact
    assert isinstance(program, JointProgram)
    assert all(v is not False for v in program.variants.values())
    assert program.backward_code.count("_fire(") == 2  # one per hooked value


def test_hook_on_a_fused_chain_float32(torch):
    pytest.importorskip("numba")

    def chain(lib: Any) -> Any:
        def fn(x: Any) -> Any:
            y = x
            for k in range(6):
                y = lib.tanh(y * 1.01)
                if k % 2:
                    y.register_hook(_double)
            return y.sum()
        return fn

    opt = hookgrad.compile(chain(hookgrad))
    for _ in range(3):
        got = _grad(hookgrad, opt, "float32")
    np.testing.assert_allclose(got, _grad(torch, chain(torch), "float32"), rtol=1e-5)
    program = opt._hookgrad_cache[0].artifact
    if program.fused is not None:
        assert "_group_bwd" in program.backward_code and "_fire(" in program.backward_code


def _bad(g: Any) -> Any:
    return g.sum()


def test_bad_hook_result_raises_eagers_error(torch):
    def fn(lib: Any) -> Any:
        def f(x: Any) -> Any:
            y = x.exp()
            y.register_hook(_bad)
            return y.sum()
        return f

    messages = []
    for lib, f in ((torch, fn(torch)), (hookgrad, hookgrad.compile(fn(hookgrad))),
                   (hookgrad, hookgrad.compile(fn(hookgrad)))):
        for _ in range(2):
            x = lib.tensor(X, requires_grad=True)
            with pytest.raises(RuntimeError) as info:
                f(x).backward()
            messages.append(str(info.value).split("'")[0])
    assert len(set(messages)) == 1 and "hook" in messages[0]


def test_removing_the_returned_handle_disables_the_hook(torch):
    def fn(lib: Any) -> Any:
        def f(x: Any) -> Any:
            y = x.exp()
            handle = y.register_hook(_double)
            return (y * y).sum(), handle
        return f

    results = []
    for lib, f in ((torch, fn(torch)), (hookgrad, hookgrad.compile(fn(hookgrad)))):
        for remove in (False, True, False, True):
            x = lib.tensor(X, requires_grad=True)
            out, handle = f(x)
            if remove:
                handle.remove()
            out.backward()
            results.append(x.grad.detach().numpy().copy())
    for k in range(4):
        np.testing.assert_allclose(results[4 + k], results[k], rtol=1e-10)
    assert not np.allclose(results[0], results[1])
