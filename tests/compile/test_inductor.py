"""The optimised backend: generated NumPy code (inference) and the compiled backward (training)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import hookgrad
from tests.compile._libs import plain

X0 = np.random.default_rng(0).normal(size=(4, 5)).astype(np.float32)


def _mlp() -> Any:
    hookgrad.manual_seed(0)
    return hookgrad.nn.Sequential(hookgrad.nn.Linear(5, 6), hookgrad.nn.Tanh(),
                                  hookgrad.nn.Linear(6, 2))


def _chain(x: Any) -> Any:
    y = x
    for _ in range(4):
        y = (y * 1.5 + 0.25).sin() / 2
    return (y * y).sum()


@pytest.mark.parametrize("grad", [True, False])
def test_chain_values_and_grads_match_eager(grad):
    opt = hookgrad.compile(_chain)
    ref_x = hookgrad.tensor(X0, requires_grad=grad)
    ref = _chain(ref_x)
    if grad:
        ref.backward()
    for _ in range(3):  # trace, then two calls of the generated code
        x = hookgrad.tensor(X0, requires_grad=grad)
        out = opt(x)
        np.testing.assert_allclose(out.numpy() if not grad else out.detach().numpy(),
                                   ref.detach().numpy(), rtol=1e-6)
        if grad:
            out.backward()
            np.testing.assert_allclose(x.grad.numpy(), ref_x.grad.numpy(), rtol=1e-5,
                                       atol=1e-6)
    entry = opt._hookgrad_cache[0]
    assert "def forward(" in entry.gm.numpy_code and "_impl_" in entry.gm.numpy_code
    if grad:
        assert type(out.grad_fn).__name__ == "CompiledFunctionBackward"


def test_mlp_training_steps_match_eager():
    eager, comp = _mlp(), _mlp()
    opt = hookgrad.compile(comp)
    x = hookgrad.tensor(X0)
    for _ in range(3):
        for m, f in ((eager, eager), (comp, opt)):
            m.zero_grad()
            f(x).pow(2).sum().backward()
        for a, b in zip(eager.parameters(), comp.parameters()):
            np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-5, atol=1e-6)


def test_input_hooks_still_fire_with_generated_backward():
    seen = []

    def fn(x: Any) -> Any:
        x.register_hook(lambda g: seen.append(plain(g)) or g * 2)
        return (x * 3).sum()
    opt = hookgrad.compile(fn)
    for _ in range(2):
        x = hookgrad.ones(2, requires_grad=True)
        opt(x).backward()
        assert plain(x.grad) == [6.0, 6.0]
    assert seen == [[3.0, 3.0]] * 2


def test_saved_tensor_hooks_use_the_recording_path():
    packed = []
    opt = hookgrad.compile(_chain)
    opt(hookgrad.tensor(X0, requires_grad=True))
    opt(hookgrad.tensor(X0, requires_grad=True))
    x = hookgrad.tensor(X0, requires_grad=True)
    with hookgrad.autograd.graph.saved_tensors_hooks(lambda t: packed.append(1) or t,
                                                     lambda t: t):
        out = opt(x)
    assert packed and type(out.grad_fn).__name__ != "CompiledFunctionBackward"


def test_double_backward_through_compiled_function_matches_eager():
    """NOTE [Differentiable backward]: create_graph=True gives eager's Hessian products."""
    def loss(w: Any) -> Any:
        return (hookgrad.tanh(w * 1.5) * w).pow(2).sum()

    opt = hookgrad.compile(loss)
    v = hookgrad.tensor(X0[0])
    results = []
    for f in (loss, opt, opt, opt):
        w = hookgrad.tensor(X0[1], requires_grad=True)
        (g,) = hookgrad.autograd.grad(f(w), (w,), create_graph=True)
        (hv,) = hookgrad.autograd.grad((g * v).sum(), (w,))
        results.append((g.detach().numpy(), hv.numpy()))
    for g, hv in results[1:]:
        np.testing.assert_allclose(g, results[0][0], rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(hv, results[0][1], rtol=1e-5, atol=1e-6)
    out = opt(hookgrad.tensor(X0[1], requires_grad=True))
    assert type(out.grad_fn).__name__ == "CompiledFunctionBackward"


def test_aot_eager_builds_one_compiled_node_and_matches_eager():
    opt = hookgrad.compile(_chain, backend="aot_eager")
    ref_x = hookgrad.tensor(X0, requires_grad=True)
    _chain(ref_x).backward()
    for _ in range(2):
        x = hookgrad.tensor(X0, requires_grad=True)
        out = opt(x)
        out.backward()
        np.testing.assert_allclose(x.grad.numpy(), ref_x.grad.numpy(), rtol=1e-5, atol=1e-6)
    assert type(out.grad_fn).__name__ == "CompiledFunctionBackward"
