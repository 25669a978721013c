"""The joint program's speed paths keep eager's results (issue: compiled speed).

- multi-output primitives (``native_layer_norm``, ``split``), ``F.linear`` of a 3-D input and
  primitives without rules (``eq``) run as generated code (NOTE [Multi-output primitives] in
  codegen/items.py) with eager's and PyTorch's values, gradients and hook calls;
- ``F.dropout`` with ``p=0`` or in evaluation mode records nothing, and a changed ``p`` or
  mode recompiles (its values are guarded);
- a fresh gradient array becomes ``.grad`` without a copy (NOTE [Fresh gradients] in
  codegen/leaves.py), and one a hook or another gradient can see is copied, as in eager.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import hookgrad
from hookgrad.compile.backends.joint import JointProgram

RNG = np.random.default_rng(11)
X = RNG.normal(size=(2, 5, 8))
W1 = RNG.normal(size=(24, 8)) * 0.3
B1 = RNG.normal(size=(24,)) * 0.1
G = 1.0 + RNG.normal(size=(8,)) * 0.1
MASK = np.tril(np.ones((5, 5)))


def _block(lib: Any, hook: bool = True) -> Any:
    """A transformer-like block: layer norm, a 3-D linear split in three, a masked softmax."""
    F = lib.nn.functional

    def fn(x: Any, w: Any, b: Any, g: Any, mask: Any) -> Any:
        h = F.layer_norm(x, (8,), g, None)
        if hook:  # on a pick of the multi-output node (runs inside the generated backward)
            h.register_hook(lambda grad: grad * 2.0)
        q, k, v = F.linear(h, w, b).split(8, dim=2)
        att = (q @ k.transpose(1, 2)).masked_fill(mask == 0, float("-inf"))
        y = F.softmax(att, dim=-1) @ v
        return F.dropout(y, 0.0, True).pow(2).mean()
    return fn


def _args(lib: Any) -> list:
    return [lib.tensor(a, dtype=lib.float64, requires_grad=i < 4)
            for i, a in enumerate((X, W1, B1, G, MASK))]


def _run(lib: Any, fn: Any) -> tuple:
    args = _args(lib)
    loss = fn(*args)
    loss.backward()
    return float(loss.detach()), [a.grad.numpy().copy() for a in args[:4]]


@pytest.mark.oracle
def test_multi_output_and_3d_linear_graph_is_one_generated_program(torch):
    want = _run(hookgrad, _block(hookgrad))
    oracle = _run(torch, _block(torch))
    opt = hookgrad.compile(_block(hookgrad))
    for _ in range(3):  # the trace, then the program (its first run validates the backward)
        got = _run(hookgrad, opt)
        assert got[0] == pytest.approx(want[0], rel=1e-12)
        for g, w, o in zip(got[1], want[1], oracle[1]):
            np.testing.assert_allclose(g, w, rtol=1e-10, atol=1e-12)
            np.testing.assert_allclose(g, o, rtol=1e-9, atol=1e-12)
    without = _run(hookgrad, _block(hookgrad, hook=False))
    assert not np.allclose(without[1][0], want[1][0])  # the hook's doubling is in the grads
    program = opt._hookgrad_cache[0].artifact
    assert isinstance(program, JointProgram)
    assert program.variants and all(v is not False for v in program.variants.values())
    names = {n.target.__name__ for n in program.nodes if n.op == "call_function"}
    assert not any("dropout" in n for n in names)  # p=0: nothing to record


def test_unused_and_non_differentiable_outputs_get_no_gradient():
    """Only the layer norm's output is used: its mean and rstd (non-differentiable outputs)
    carry no gradient; ``max`` with indices returns an index output needing none."""
    F = hookgrad.nn.functional

    def fn(x: Any, g: Any) -> Any:
        out, idx = (F.layer_norm(x, (8,), g) * 2.0).max(dim=1)
        return out.sum(), idx

    for f in (fn, hookgrad.compile(fn)):
        for _ in range(3):
            x, g = (hookgrad.tensor(a, requires_grad=True) for a in (X, G))
            total, idx = f(x, g)
            total.backward()
            assert not idx.requires_grad and idx.dtype == hookgrad.int64
            ref_x, ref_g = (hookgrad.tensor(a, requires_grad=True) for a in (X, G))
            fn(ref_x, ref_g)[0].backward()
            np.testing.assert_allclose(x.grad.numpy(), ref_x.grad.numpy(), rtol=1e-12)
            np.testing.assert_allclose(g.grad.numpy(), ref_g.grad.numpy(), rtol=1e-12)


def test_dropout_p_and_mode_are_guarded():
    """``Dropout(0.0)`` records nothing; a later ``p`` or ``training`` change recompiles: the
    mask is drawn from the same generator as eager's, never the trace's baked identity."""
    model = hookgrad.nn.Sequential(hookgrad.nn.Linear(4, 4), hookgrad.nn.Dropout(0.0))
    opt = hookgrad.compile(model)
    x = hookgrad.ones(3, 4)
    for _ in range(3):
        assert hookgrad.equal(opt(x), model(x))
    model[1].p = 0.5
    for seed in range(3):
        hookgrad.manual_seed(seed)
        got = opt(x)
        hookgrad.manual_seed(seed)
        assert hookgrad.equal(got, model(x))
    assert (got == 0).any()
    model.eval()
    for _ in range(2):
        assert hookgrad.equal(opt(x), model(x))


def _linear_step(model: Any) -> list:
    model.zero_grad()
    model(hookgrad.ones(4, 6)).pow(2).sum().backward()
    return [p.grad for p in model.parameters()]


def test_fresh_gradients_become_grad_and_hooked_ones_are_copied(monkeypatch):
    """NOTE [Fresh gradients]: the gradients the generated backward makes are kept as
    ``.grad`` (no copy, as eager keeps them); one a tensor hook keeps is copied (eager copies
    it too), so the hook's tensor is not the stored gradient. Values are eager's either way."""
    from hookgrad.autograd import _nodes
    from hookgrad.compile.cache.frame import CACHES

    copies = []
    real = _nodes.copy_obeying
    monkeypatch.setattr(_nodes, "copy_obeying",
                        lambda var, grad: copies.append(grad.shape) or real(var, grad))
    model = hookgrad.nn.Sequential(hookgrad.nn.Linear(6, 5), hookgrad.nn.ReLU(),
                                   hookgrad.nn.Linear(5, 3))
    opt = hookgrad.compile(model)
    want = [g.numpy().copy() for g in _linear_step(model)]
    for _ in range(3):
        copies.clear()
        got = _linear_step(opt)
        for g, w in zip(got, want):
            np.testing.assert_array_equal(g.numpy(), w)
    assert copies == []
    assert any(isinstance(e.artifact, JointProgram) for es in CACHES.values() for e in es)
    weight = model[0].weight
    kept: list = []
    weight.register_hook(lambda g: kept.append(g))
    for _ in range(2):
        copies.clear()
        got = _linear_step(opt)
        np.testing.assert_array_equal(got[0].numpy(), want[0])
        assert copies == [(5, 6)]
    weight.grad.add_(1.0)  # the hook's tensor is not the stored gradient
    np.testing.assert_array_equal(kept[-1].numpy(), want[0])


def test_generated_backward_frees_each_gradient_after_its_last_use(monkeypatch):
    """A gradient is dropped once the generated backward has used it (as eager's engine frees
    a node's gradient): the backward's peak stays near eager's instead of holding all 40
    gradients of a 40-op chain (40 x 512 KiB) until it returns."""
    import tracemalloc

    from hookgrad.compile.codegen import kernels

    monkeypatch.setattr(kernels, "_FORCED", [False])  # NumPy code: one gradient per op

    def fn(x: Any) -> Any:
        y = x
        for _ in range(20):
            y = (y * 1.01).tanh()
        return y.sum()

    data = np.random.default_rng(3).normal(size=(256, 256))

    def backward_peak(f: Any) -> tuple:
        x = hookgrad.tensor(data, requires_grad=True)
        loss = f(x)
        tracemalloc.start()
        loss.backward()
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        return peak, x.grad.numpy().copy()

    eager_peak, want = backward_peak(fn)
    opt = hookgrad.compile(fn)
    for _ in range(3):
        peak, got = backward_peak(opt)
        np.testing.assert_allclose(got, want, rtol=1e-12)
    assert isinstance(opt._hookgrad_cache[0].artifact, JointProgram)
    assert peak <= 2 * eager_peak + 2**20, (peak, eager_peak)
