"""NOTE [Rule operations]: the engine, not the rule, decides whether rules compute on arrays.

- a passive recorder (``sees_backward = False``) around a backward changes nothing about which
  rule operations run;
- a tracing recorder (``sees_backward = True``) sees every operation of the rules;
- for every primitive of the OpSpec table, the gradients computed with `ARRAY_OPS` (plain
  backward) and with `TENSOR_OPS` (``create_graph=True``) agree.
"""

from __future__ import annotations

import collections

import numpy as np
import pytest

import hookgrad
import hookgrad.nn.functional as F
from hookgrad._config import recording
from hookgrad._ops._rule_ops import ArrayOps, TensorOps
from hookgrad.testing._opspec import all_specs, make_arrays
from hookgrad.testing._oracle import (
    build_inputs,
    call_spec,
    cotangents,
    diff_inputs,
    flat_tensors,
    spec_cases,
)


class _Recorder:
    """Records the name of every primitive `bind` runs while it is on the stack."""

    def __init__(self, sees_backward: bool) -> None:
        self.sees_backward = sees_backward
        self.names: list = []

    def record(self, prim, inputs, params, outputs, cast=None) -> None:
        self.names.append(prim.name)

    def record_inplace(self, prim, inputs, params, out, target, cast=None) -> None:
        self.names.append(prim.name + "_")

    def rebase(self, target, out) -> None:
        return None

    def record_function(self, fn_cls, inputs, outputs) -> None:
        self.names.append(fn_cls.__name__)


@pytest.fixture
def op_counts(monkeypatch):
    """Counts calls of every operation of both namespaces, keyed ``(namespace, op)``."""
    counts: collections.Counter = collections.Counter()
    for cls in (ArrayOps, TensorOps):
        for name, member in list(vars(cls).items()):
            if not isinstance(member, staticmethod):
                continue
            fn = member.__func__

            def spy(*args, _fn=fn, _key=(cls.__name__, name), **kwargs):
                counts[_key] += 1
                return _fn(*args, **kwargs)

            monkeypatch.setattr(cls, name, staticmethod(spy))
    return counts


def _model_backward(seed: int = 0) -> list:
    """A small CNN + MLP loss: conv, batch norm, max pool, tanh, linear (addmm), mm, sum, mean."""
    rng = np.random.default_rng(seed)
    x = hookgrad.tensor(rng.standard_normal((2, 3, 6, 6)))
    w = hookgrad.tensor(rng.standard_normal((4, 3, 3, 3)), requires_grad=True)
    b = hookgrad.tensor(rng.standard_normal(4), requires_grad=True)
    gamma = hookgrad.tensor(rng.standard_normal(4), requires_grad=True)
    beta = hookgrad.tensor(rng.standard_normal(4), requires_grad=True)
    lw = hookgrad.tensor(rng.standard_normal((5, 16)), requires_grad=True)
    lb = hookgrad.tensor(rng.standard_normal(5), requires_grad=True)
    m = hookgrad.tensor(rng.standard_normal((5, 5)), requires_grad=True)
    h = F.conv2d(x, w, b)
    h = F.batch_norm(h, None, None, gamma, beta, training=True)
    h = F.max_pool2d(h, 2).tanh().reshape(2, 16)
    h = F.linear(h, lw, lb).mm(m)
    loss = h.sum() + h.mean()
    params = [w, b, gamma, beta, lw, lb, m]
    return [g.detach() for g in hookgrad.autograd.grad(loss, params)]


def test_passive_recorder_changes_no_rule_operations(op_counts):
    plain = _model_backward()
    without = dict(op_counts)
    op_counts.clear()
    passive = _Recorder(sees_backward=False)
    with recording(passive):
        seen = _model_backward()
    assert dict(op_counts) == without
    assert all(k[0] == "ArrayOps" for k in without)  # a plain backward runs on arrays
    assert without[("ArrayOps", "mm")] >= 3  # mm (2 rules) and addmm's mat1/mat2 rules
    assert without[("ArrayOps", "call")] >= 3  # convolution gradients, max-pool, tanh
    for a, b in zip(plain, seen, strict=True):
        np.testing.assert_array_equal(a.numpy(), b.numpy())


def test_passive_recorder_sees_no_backward_ops_of_array_rules():
    # before NOTE [Rule operations], installing any recorder switched the rules to hookgrad ops,
    # so a passive recorder saw ``view``, ``expand``, ``mul``... during a backward
    x = hookgrad.randn(4, 3, requires_grad=True)
    w = hookgrad.randn(3, 2, requires_grad=True)
    loss = (x.mm(w).tanh() * 2).sum()
    passive = _Recorder(sees_backward=False)
    with recording(passive):
        loss.backward()
    assert passive.names == []


def _traced(fn, *tensors) -> tuple[list, list]:
    """Names a tracing recorder sees during the backward of ``fn(*tensors).sum()``, and grads."""
    out = fn(*tensors).sum()
    tracer = _Recorder(sees_backward=True)
    with recording(tracer):
        grads = hookgrad.autograd.grad(out, tensors)
    return tracer.names, grads


def _leaf(*shape: int) -> hookgrad.Tensor:
    return hookgrad.randn(*shape, dtype=hookgrad.float64, requires_grad=True)


@pytest.mark.parametrize(("fn", "shapes", "expected"), [
    (lambda a, b: a.mm(b), [(3, 4), (4, 2)], {"expand", "t", "mm"}),
    (lambda a, b, c: hookgrad.addmm(c, a, b), [(3, 4), (4, 2), (2,)],
     {"expand", "t", "mm", "sum_to_size"}),
    (lambda a: a.tanh(), [(3, 4)], {"expand", "tanh_backward"}),
    (lambda a: a.sum(1), [(3, 4)], {"expand"}),
    (lambda a, w: F.conv2d(a, w), [(1, 2, 5, 5), (3, 2, 3, 3)],
     {"convolution_backward_input", "convolution_backward_weight"}),
    (lambda a, g, b: F.batch_norm(a, None, None, g, b, training=True), [(4, 3, 2), (3,), (3,)],
     {"mean_dim", "sub", "mul", "rsqrt"}),
    (lambda a: F.max_pool2d(a, 2), [(1, 2, 4, 4)], {"max_pool2d_with_indices_backward"}),
    (lambda a: a.softmax(-1), [(3, 4)], {"mul", "sub", "sum_dim"}),
], ids=["mm", "addmm", "tanh", "sum", "conv", "batch_norm", "max_pool", "softmax"])
def test_tracing_recorder_sees_the_rules_operations(op_counts, fn, shapes, expected):
    tensors = [_leaf(*s) for s in shapes]
    names, traced = _traced(fn, *tensors)
    assert expected <= set(names), names
    assert not any(k[0] == "ArrayOps" for k in op_counts)  # every rule got hookgrad ops
    plain = hookgrad.autograd.grad(fn(*tensors).sum(), tensors)
    for a, b in zip(plain, traced, strict=True):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-12, atol=1e-12)


def test_conv_double_backward_nodes_match_pytorch(torch):
    def scenario(lib):
        x = lib.ones(1, 2, 5, 5, dtype=lib.float64, requires_grad=True)
        w = lib.ones(3, 2, 3, 3, dtype=lib.float64, requires_grad=True)
        gx, gw = lib.autograd.grad(lib.nn.functional.conv2d(x, w).sum(), (x, w),
                                   create_graph=True)
        return gx.grad_fn.name(), gw.grad_fn.name()

    assert scenario(hookgrad) == scenario(torch)


def test_node_applied_by_hand_gets_tensor_ops(op_counts):
    x = _leaf(3, 4)
    w = _leaf(4, 2)
    y = x.mm(w)
    gx, gw = y.grad_fn(hookgrad.ones(3, 2, dtype=hookgrad.float64))
    assert set(op_counts) == {("TensorOps", "mm"), ("TensorOps", "t")}
    np.testing.assert_array_equal(gx.detach().numpy(), np.ones((3, 2)) @ w.detach().numpy().T)


def test_mode_is_per_thread(op_counts):
    # a tracer on this thread's stack does not change the operations of another thread's pass
    import threading

    x = _leaf(3, 4)
    w = _leaf(4, 2)
    seen: dict = {}

    def other() -> None:
        before = collections.Counter(op_counts)
        hookgrad.autograd.grad(x.mm(w).sum(), (x, w))
        seen["other"] = {k[0] for k in op_counts - before}

    tracer = _Recorder(sees_backward=True)
    with recording(tracer):
        thread = threading.Thread(target=other)
        thread.start()
        thread.join()
        before = collections.Counter(op_counts)
        hookgrad.autograd.grad(x.mm(w).sum(), (x, w))
        seen["tracing"] = {k[0] for k in op_counts - before}
    assert seen == {"other": {"ArrayOps"}, "tracing": {"TensorOps"}}


def test_rules_outside_the_engine_get_tensor_ops():
    # forward AD's "elementwise" JVPs reuse VJP rules: they compute on tangents (tensors)
    import hookgrad.autograd.forward_ad as fwAD

    x = hookgrad.randn(5, dtype=hookgrad.float64)
    t = hookgrad.randn(5, dtype=hookgrad.float64)
    with fwAD.dual_level():
        y = fwAD.make_dual(x, t).relu().tanh()
        tangent = fwAD.unpack_dual(y).tangent
    expected = t.numpy() * (x.numpy() > 0) * (1 - np.tanh(np.maximum(x.numpy(), 0)) ** 2)
    np.testing.assert_allclose(tangent.numpy(), expected, rtol=1e-12)


# Rules whose two modes evaluate the formula in another order (the `ops.graph` exceptions of
# NOTE [Rule operations]): the LSTM array kernel, normalization statistics
# recomputed from the input (NOTE [Normalization rules]), cumprod's O(n) and O(n^2) zero paths,
# vector norms, silu/mish, whose array body is one fused pass as in PyTorch, and the softmax
# family, whose array body sums rows through BLAS (NOTE [Row sums through BLAS]). They agree to
# rounding: 1e-12 relative in float64, 1e-5 in float32. Every other primitive is bit-identical.
_TOLERANT = {"silu", "mish", "lstm", "rnn", "cumprod", "norm", "batch_norm", "softmax",
             "layer_norm", "group_norm", "instance_norm", "normalize", "vector_norm"}


def _tolerant(name: str) -> bool:
    return any(word in name for word in _TOLERANT)

CASES, IDS = spec_cases(all_specs())


def _vjp(spec, sample, arrays, create_graph: bool) -> list:
    inputs = build_inputs(hookgrad, sample, arrays)
    outs = [o for o in flat_tensors(call_spec(hookgrad, spec, sample, inputs)) if o.requires_grad]
    wrt = diff_inputs(inputs)
    if not outs or not wrt:
        return []
    cots = [hookgrad.tensor(c) for c in cotangents(outs)]
    try:
        grads = hookgrad.autograd.grad(outs, wrt, cots, allow_unused=True,
                                       create_graph=create_graph)
    except (RuntimeError, NotImplementedError) as e:  # no derivative: the same in both modes
        return [type(e)]
    return [None if g is None else g.detach().numpy() for g in grads]


@pytest.mark.parametrize(("spec", "sample"), CASES, ids=IDS)
def test_array_and_tensor_operations_agree(spec, sample):
    arrays = make_arrays(sample)
    plain = _vjp(spec, sample, arrays, create_graph=False)
    graph = _vjp(spec, sample, arrays, create_graph=True)
    assert len(plain) == len(graph)
    for a, b in zip(plain, graph, strict=True):
        assert (a is None) == (b is None)
        if a is None or isinstance(a, type):
            assert a is b
            continue
        assert a.dtype == b.dtype and a.shape == b.shape
        if _tolerant(spec.name.lower()):
            tol = 1e-12 if a.dtype == np.float64 else 1e-5
            np.testing.assert_allclose(a, b, rtol=tol, atol=tol)
        else:
            np.testing.assert_array_equal(a, b)
