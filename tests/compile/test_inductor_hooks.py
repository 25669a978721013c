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
from hookgrad.compile.backends.backends import lookup_backend
from hookgrad.compile.backends.joint import JointProgram
from tests.compile._libs import is_torch, plain

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


def _module_scenario(lib: Any, backend: Any, x_grad: bool) -> dict:
    """Two hooked Linear layers; the pre-hook of ``b`` scales grad_output and the full hook of
    ``a`` replaces grad_input (when there is one)."""
    log: list = []
    lib.manual_seed(0)
    net = lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.Tanh(), lib.nn.Linear(4, 2))
    with lib.no_grad():
        for i, p in enumerate(net.parameters()):
            p.copy_(lib.linspace(-1.0, 1.0, p.numel()).reshape(p.shape) * (i + 1) / 3)

    def pre(m: Any, go: tuple) -> Any:
        log.append(("pre", type(m).__name__, [plain(g) for g in go]))
        return (go[0] * 2,) if m is net[2] else None

    def full(m: Any, gi: tuple, go: tuple) -> Any:
        log.append(("full", type(m).__name__, [plain(g) for g in gi], [plain(g) for g in go]))
        return (gi[0] * 0.5,) if m is net[0] and gi[0] is not None else None

    for k in (0, 2):
        net[k].register_full_backward_pre_hook(pre)
        net[k].register_full_backward_hook(full)
    f = lib.compile(net, backend=backend) if backend else net
    grads = []
    for _ in range(3):
        x = lib.tensor([[0.5, -1.0, 2.0], [1.0, 0.0, -0.5]], requires_grad=x_grad)
        if x_grad:
            (f(x) * lib.tensor([1.0, 2.0])).sum().backward()
        else:
            with pytest.warns(UserWarning, match="Full backward hook is firing"):
                (f(x) * lib.tensor([1.0, 2.0])).sum().backward()
        grads.append((plain(x.grad), plain(net[0].weight.grad), plain(net[2].bias.grad)))
        net.zero_grad()
    return {"log": log, "grads": grads}


@pytest.mark.filterwarnings("ignore:The .grad attribute:UserWarning:torch.*")
@pytest.mark.parametrize("x_grad", [True, False])
@pytest.mark.parametrize("backend", ["inductor", "aot_eager"])
def test_module_backward_hooks_in_generated_backward(backend, x_grad, torch):
    got = _module_scenario(hookgrad, backend, x_grad)
    assert got == _module_scenario(hookgrad, None, x_grad)
    assert got == _module_scenario(torch, None, x_grad)
    programs = []

    def recording(gm: Any, example_inputs: list) -> Any:
        programs.append(lookup_backend(backend)(gm, example_inputs))
        return programs[-1]

    mod = hookgrad.nn.Linear(3, 2)
    mod.register_full_backward_hook(lambda m, gi, go: None)
    opt = hookgrad.compile(mod, backend=recording)
    for _ in range(2):
        opt(hookgrad.ones(1, 3, requires_grad=True)).sum().backward()
    (program,) = programs
    assert isinstance(program, JointProgram)
    assert "_run_node" in program.backward_code
    assert all(v is not False for v in program.variants.values())
