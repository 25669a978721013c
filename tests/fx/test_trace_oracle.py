"""symbolic_trace against torch.fx: the same program traced by both libraries gives the same
generated code, graph text, node targets, results, gradients and hook logs."""

from __future__ import annotations

import copy
import operator
import pickle

import numpy as np
import pytest

import hookgrad
from tests.fx import _programs as P

RNG = np.random.default_rng(0)


def _both(torch, make):
    h, t = make(hookgrad), make(torch)
    if isinstance(h, hookgrad.nn.Module):
        P.copy_params(h, t)
    return h, t


def _flat(value):
    if isinstance(value, dict):
        return [v for k in sorted(value) for v in _flat(value[k])]
    if isinstance(value, (tuple, list)):
        return [v for item in value for v in _flat(item)]
    return [value]


def _assert_same(h_value, t_value):
    for a, b in zip(_flat(h_value), _flat(t_value), strict=True):
        if hasattr(a, "detach"):
            np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-5,
                                       atol=1e-6)
        else:
            assert a == b


@pytest.mark.parametrize("name", sorted(P.PROGRAMS))
def test_code_and_graph_match_torch(torch, name):
    make, _ = P.PROGRAMS[name]
    h, t = _both(torch, make)
    hg, tg = hookgrad.fx.symbolic_trace(h), torch.fx.symbolic_trace(t)
    assert P.normalise(hg.code) == tg.code
    assert P.normalise(str(hg.graph)) == str(tg.graph)
    assert [n.op for n in hg.graph.nodes] == [n.op for n in tg.graph.nodes]
    assert [name for name, _ in hg.named_modules()] == [name for name, _ in tg.named_modules()]
    assert list(hg.state_dict()) == list(tg.state_dict())


@pytest.mark.parametrize("name", sorted(P.PROGRAMS))
def test_results_and_grads_match_eager_and_torch(torch, name):
    make, shapes = P.PROGRAMS[name]
    h, t = _both(torch, make)
    hg, tg = hookgrad.fx.symbolic_trace(h), torch.fx.symbolic_trace(t)
    arrays = [RNG.standard_normal(s).astype(np.float32) for s in shapes]
    outs = []
    for lib, mod in ((hookgrad, hg), (hookgrad, h), (torch, tg)):
        xs = [P.to_lib(lib, a, requires_grad=True) for a in arrays]
        mod.zero_grad()  # the GraphModule shares its parameters with the eager module
        out = mod(*xs)
        sum(v.sum() for v in _flat(out) if hasattr(v, "sum")).backward()
        outs.append((out, [x.grad for x in xs], [p.grad.clone() for p in mod.parameters()]))
    for other in outs[1:]:
        _assert_same(outs[0], other)


def test_node_targets_are_the_public_objects():
    torch = hookgrad  # the alias users write
    gm = torch.fx.symbolic_trace(P.mixed_module(torch))
    targets = {n.name: n.target for n in gm.graph.nodes}
    assert targets["relu"] == torch.relu and targets["relu"] is hookgrad.nn.functional.relu
    assert targets["add"] is operator.add and targets["cat"] is torch.cat
    assert targets["sum_1"] == "sum" and targets["lin"] == "lin" and targets["seq_0"] == "seq.0"
    assert targets["getattr_1"] is getattr and targets["p"] == "p"


def test_scalars_stay_scalars(torch):
    for lib in (hookgrad, torch):
        gm = lib.fx.symbolic_trace(P.scalar_fn(lib), concrete_args={"n": 3})
        mul = next(n for n in gm.graph.nodes if n.target is operator.mul)
        assert mul.args[1] == 3 and type(mul.args[1]) is int
        x = lib.ones(2)
        assert float(gm(x, 3)) == 9.0
        with pytest.raises(AssertionError, match="specialized to have value 3"):
            gm(x, 4)
    h = hookgrad.fx.symbolic_trace(P.scalar_fn(hookgrad), concrete_args={"n": 3})
    t = torch.fx.symbolic_trace(P.scalar_fn(torch), concrete_args={"n": 3})
    assert [n.op for n in h.graph.nodes] == [n.op for n in t.graph.nodes]
    assert [n.name for n in h.graph.nodes] == [n.name for n in t.graph.nodes]


def test_star_args_and_kwonly_match_torch(torch):
    h = hookgrad.fx.symbolic_trace(P.star_args_fn(hookgrad))
    t = torch.fx.symbolic_trace(P.star_args_fn(torch))
    assert P.normalise(h.code) == t.code
    x = np.ones(3, np.float32)
    # The generated signature is ``(x, scale = 2.0, *rest)`` in both libraries.
    _assert_same(h(hookgrad.tensor(x), 3.0, hookgrad.tensor(x)),
                 t(torch.tensor(x), 3.0, torch.tensor(x)))


def _closure(body, lib):
    return lambda x: body(lib, x)


@pytest.mark.parametrize("body, exc", [
    (lambda lib, x: x if x.sum() > 0 else -x, "TraceError"),
    (lambda lib, x: [v for v in x], "TraceError"),
    (lambda lib, x: len(x), "RuntimeError"),
])
def test_control_flow_errors_match_torch(torch, body, exc):
    for lib in (hookgrad, torch):
        expected = lib.fx.proxy.TraceError if exc == "TraceError" else RuntimeError
        with pytest.raises(expected) as info:
            lib.fx.symbolic_trace(_closure(body, lib))
        assert type(info.value) is expected
    with pytest.raises(hookgrad.fx.TraceError, match="cannot be used as inputs to control flow"):
        hookgrad.fx.symbolic_trace(lambda x: x if x.sum() > 0 else -x)


def _hooked(lib, log):
    model = P.nested_module(lib)
    for name, mod in model.named_modules():
        if isinstance(mod, lib.nn.Linear):
            mod.register_forward_pre_hook(lambda m, a, n=name: log.append(("pre", n)))
            mod.register_forward_hook(lambda m, a, o, n=name: log.append(("fwd", n)))
            mod.register_full_backward_hook(lambda m, gi, go, n=name: log.append(("bwd", n)))
    return model


def test_submodule_hooks_fire_through_graph_module(torch):
    logs = []
    for lib in (hookgrad, torch):
        trace_log, run_log = [], []
        gm = lib.fx.symbolic_trace(_hooked(lib, trace_log))
        assert trace_log == []  # leaves are not run while tracing
        eager_log = []
        x = lib.ones(3, 4, requires_grad=True)
        _hooked(lib, eager_log)(x).sum().backward()
        trace_log.clear()
        gm(x).sum().backward()
        run_log = list(trace_log)
        assert run_log == eager_log
        logs.append(run_log)
    assert logs[0] == logs[1]


def test_graph_module_own_hooks_fire():
    gm = hookgrad.fx.symbolic_trace(P.nested_module(hookgrad))
    log = []
    gm.register_forward_hook(lambda m, a, o: log.append("gm"))
    gm(hookgrad.ones(2, 4))
    assert log == ["gm"]


def test_pickle_and_deepcopy_keep_code_and_results():
    gm = hookgrad.fx.symbolic_trace(P.mixed_module(hookgrad))
    x = hookgrad.randn(2, 3)
    for clone in (pickle.loads(pickle.dumps(gm)), copy.deepcopy(gm)):
        assert clone.code == gm.code and type(clone).__name__ == "Mixed"
        _assert_same(clone(x), gm(x))
        assert clone.lin is not gm.lin
        clone.graph.lint()


def test_print_readable_matches_torch(torch, capsys):
    h, t = _both(torch, P.nested_module)
    hg, tg = hookgrad.fx.symbolic_trace(h), torch.fx.symbolic_trace(t)
    assert P.normalise(hg.print_readable(print_output=False)) == \
        tg.print_readable(print_output=False)
    hg.print_readable()
    assert "class Net(torch.nn.Module):" in capsys.readouterr().out
    assert P.normalise(str(hg)) == str(tg)


def test_pickle_graph_with_generated_public_functions():
    # hookgrad.tanh is generated (its __qualname__ does not resolve): found by a fuzz program.
    gm = hookgrad.fx.symbolic_trace(lambda x: hookgrad.tanh(x) + hookgrad.sigmoid(x))
    clone = pickle.loads(pickle.dumps(gm))
    assert [n.target for n in clone.graph.nodes][1] is hookgrad.tanh
    x = hookgrad.randn(3)
    _assert_same(clone(x), gm(x))
