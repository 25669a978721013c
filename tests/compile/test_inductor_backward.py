"""The generated backward of the "inductor" backend (NOTE [Generated backward]).

Each case runs a small float64 function per lowered primitive: the compiled gradients must
equal hookgrad eager's (and PyTorch eager's), pass a numerical gradcheck through the compiled
call, and come from generated code (the variant is not the rule-walk fallback; where every
derivative traces, NOTE [Traced derivatives], no per-node rule helper appears in the source).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import hookgrad
from hookgrad.compile.backends.joint import JointProgram

RNG = np.random.default_rng(7)
A = RNG.normal(size=(3, 4))
B = RNG.normal(size=(4,))
P = np.abs(RNG.normal(size=(3, 4))) + 0.5  # positive: log, sqrt, pow with a float exponent
W = RNG.normal(size=(2, 4))
M = RNG.normal(size=(4, 2))


def _f(lib: Any, name: str) -> Any:
    F = lib.nn.functional
    return {
        "add_sub_bcast": lambda a, b: ((a + b) - b * 2.0).sum(),
        "mul_div": lambda a, b: (a * b / (b * b + 1.0)).sum(),
        "neg_tanh_exp": lambda a, b: (-(a * 0.5).tanh()).exp().sum(),
        "log_sqrt": lambda p, b: (p.log() + p.sqrt()).sum(),
        "sigmoid_relu": lambda a, b: (a.sigmoid() + (a - 0.1).relu()).sum(),
        "sin_cos_abs": lambda a, b: (a.sin() * a.cos() + a.abs()).sum(),
        "pow_reciprocal": lambda p, b: (p.pow(2) + p.pow(1.5) + p.reciprocal()).sum(),
        "mean_dims": lambda a, b: (a.mean(1).sum() + a.sum(0, keepdim=True).mean()),
        "views": lambda a, b: (a.reshape(2, 6).t().unsqueeze(0) * 3.0).tanh().sum(),
        "linear": lambda a, b: F.linear(a, lib.tensor(W, dtype=lib.float64), b[:2]).sum(),
        "matmul_relu": lambda a, b: (a @ lib.tensor(M, dtype=lib.float64)).relu().sum(),
        "log_softmax": lambda a, b: F.log_softmax(a, 1).mean(),
        "reuse": lambda a, b: (a * a + a.exp() * a).mean(),
    }[name]


FULLY_LOWERED = {"add_sub_bcast", "mul_div", "neg_tanh_exp", "log_sqrt", "sigmoid_relu",
                 "sin_cos_abs", "pow_reciprocal", "mean_dims", "views", "matmul_relu",
                 "reuse", "log_softmax"}
CASES = sorted(FULLY_LOWERED | {"linear"})  # linear's bias is a slice: its rule writes in place


def _inputs(lib: Any, name: str) -> tuple:
    first = P if name in ("log_sqrt", "pow_reciprocal") else A
    return (lib.tensor(first, dtype=lib.float64, requires_grad=True),
            lib.tensor(B, dtype=lib.float64, requires_grad=True))


def _grads(lib: Any, fn: Any, name: str) -> list:
    a, b = _inputs(lib, name)
    fn(a, b).backward()
    return [a.grad.detach().numpy().copy(), None if b.grad is None else b.grad.numpy().copy()]


@pytest.mark.parametrize("name", CASES)
def test_generated_backward_matches_eager_torch_and_gradcheck(name, torch):
    fn = _f(hookgrad, name)
    eager = _grads(hookgrad, fn, name)
    opt = hookgrad.compile(fn)
    for _ in range(3):  # the trace, then the generated program twice
        got = _grads(hookgrad, opt, name)
        for g, e in zip(got, eager):
            assert (g is None) == (e is None)
            if g is not None:
                np.testing.assert_allclose(g, e, rtol=1e-10, atol=1e-12)
    oracle = _grads(torch, _f(torch, name), name)
    for g, o in zip(got, oracle):
        if o is not None:
            np.testing.assert_allclose(g, o, rtol=1e-9, atol=1e-12)
    program = opt._hookgrad_cache[0].artifact
    assert isinstance(program, JointProgram)
    assert program.variants and all(v is not False for v in program.variants.values())
    if name in FULLY_LOWERED:
        assert "_vjp" not in program.backward_code, program.backward_code
    assert hookgrad.autograd.gradcheck(opt, _inputs(hookgrad, name))


def test_output_grads_and_needed_inputs_choose_variants():
    """Two outputs (one unused) and an input without grad: each pattern is its own variant."""
    def fn(a: Any, b: Any) -> Any:
        h = (a * b).tanh()
        return h.sum(), (h * 2).exp().sum()

    opt = hookgrad.compile(fn)
    for needs_b in (True, False, True, False):  # the first call of each entry is the trace
        for pick in (0, 1):
            a = hookgrad.tensor(A, requires_grad=True)
            b = hookgrad.tensor(B, requires_grad=needs_b)
            ra = hookgrad.tensor(A, requires_grad=True)
            rb = hookgrad.tensor(B, requires_grad=needs_b)
            opt(a, b)[pick].backward()
            fn(ra, rb)[pick].backward()
            np.testing.assert_allclose(a.grad.numpy(), ra.grad.numpy(), rtol=1e-12)
            assert (b.grad is None) == (not needs_b)
            if needs_b:
                np.testing.assert_allclose(b.grad.numpy(), rb.grad.numpy(), rtol=1e-12)
    variants = [k[:2] for e in opt._hookgrad_cache for k, v in e.artifact.variants.items()
                if v is not False]
    assert sorted(variants) == sorted((needs, present) for needs in ((True, True), (True, False))
                                      for present in ((True, False), (False, True)))


def test_a_lowering_that_disagrees_with_the_rule_falls_back(monkeypatch):
    """NOTE [Validated variants]: a wrong generated gradient is never used (here the inline
    form of ``tanh_backward``, the primitive tanh's rule calls, is broken)."""
    from hookgrad.compile.codegen import pointwise

    broken = pointwise.Lowering("({a} * {c2})")
    monkeypatch.setitem(pointwise.POINTWISE, "tanh_backward", broken)
    fn = _f(hookgrad, "neg_tanh_exp")
    eager = _grads(hookgrad, fn, "neg_tanh_exp")
    opt = hookgrad.compile(fn)
    for _ in range(3):
        got = _grads(hookgrad, opt, "neg_tanh_exp")
        np.testing.assert_allclose(got[0], eager[0], rtol=1e-12)
    assert list(opt._hookgrad_cache[0].artifact.variants.values()) == [False]


def _steps(target: Any, metas: tuple) -> list:
    from hookgrad.compile.codegen.derivative import derivative

    found = derivative(target, metas)
    return None if found is None else [s.prim.name for s in found.steps]


def test_derivatives_are_traced_from_the_registered_rules():
    """NOTE [Traced derivatives]: the steps are the primitives the op table's rules call (the
    node's own forward first), not restated formulas."""
    from hookgrad._ops.registry import PRIMITIVES
    from hookgrad.compile.trace.recorder import PrimCall

    f32 = np.dtype(np.float32)
    tanh = PrimCall(PRIMITIVES["tanh"], {}, None)
    assert _steps(tanh, (((3, 4), f32),)) == ["tanh", "tanh_backward"]
    mul = PrimCall(PRIMITIVES["mul"], {}, None)  # the broadcast input's sum is the rule's
    assert _steps(mul, (((3, 4), f32), ((4,), f32))) == ["mul", "mul", "mul", "sum_to_size"]
    linear = hookgrad.nn.functional.linear  # a function: its primitives' rules, last first
    assert _steps(linear, (((5, 4), f32), ((2, 4), f32), ((2,), f32))) == [
        "t", "addmm", "sum_to_size", "t", "mm", "t", "mm", "t", "t"]


def test_a_rule_that_reads_values_is_not_traced_and_its_rules_run_instead():
    """A rule computing a mask from values (``pow`` by a tensor exponent keeps the gradient
    where the exponent is nonzero) holds for those values only: refused, so the generated code
    calls the rules, and the gradients are eager's."""
    from hookgrad._ops.registry import PRIMITIVES
    from hookgrad.compile.trace.recorder import PrimCall

    f64 = np.dtype(np.float64)
    pow_t = PrimCall(PRIMITIVES["pow_tensor"], {}, None)
    assert _steps(pow_t, (((3, 4), f64), ((3, 4), f64))) is None

    def fn(p: Any, e: Any) -> Any:
        return (p ** e).sum()

    p = hookgrad.tensor(P, requires_grad=True)
    e = hookgrad.tensor(np.where(A > 0, A, 0.0), requires_grad=True)
    fn(p, e).backward()
    opt = hookgrad.compile(fn)
    for _ in range(3):
        cp = hookgrad.tensor(P, requires_grad=True)
        ce = hookgrad.tensor(np.where(A > 0, A, 0.0), requires_grad=True)
        opt(cp, ce).backward()
        np.testing.assert_array_equal(cp.grad.numpy(), p.grad.numpy())
        np.testing.assert_array_equal(ce.grad.numpy(), e.grad.numpy())
    program = opt._hookgrad_cache[0].artifact
    assert all(v is not False for v in program.variants.values())
    assert "_vjp" in program.backward_code


def test_float32_generated_backward_is_eager_bit_for_bit_without_kernels(monkeypatch):
    """Without Numba the generated code computes each rule's primitives as eager does: the
    gradients of a float32 MLP mixing the lowered primitives are eager's exactly."""
    monkeypatch.setenv("HOOKGRAD_NUMBA", "0")
    F = hookgrad.nn.functional
    rng = np.random.default_rng(0)
    params = [hookgrad.tensor(rng.normal(size=s).astype(np.float32), requires_grad=True)
              for s in ((16, 8), (16,), (4, 16))]

    def fn(x: Any) -> Any:
        h = F.linear(x, params[0], params[1]).relu()
        h = (h.tanh() * h.sigmoid() + (h + 1.0).sqrt() / 2.0 - h.exp().neg()).abs()
        return (F.linear(h, params[2]).sin() * 3.0).mean()

    def grads(f: Any, seed: int) -> list:
        for t in params:
            t.grad = None
        x = hookgrad.tensor(np.random.default_rng(seed).normal(size=(8, 8)).astype(np.float32),
                            requires_grad=True)
        f(x).backward()
        return [x.grad.numpy().copy()] + [t.grad.numpy().copy() for t in params]

    opt = hookgrad.compile(fn)
    for seed in range(3):
        for got, want in zip(grads(opt, seed), grads(fn, seed)):
            np.testing.assert_array_equal(got, want)
    assert all(v is not False for v in opt._hookgrad_cache[0].artifact.variants.values())
