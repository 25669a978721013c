"""The fx pass library beyond ShapeProp (split_module, SubgraphMatcher, the pass managers,
experimental.optimization), each scenario run on torch.fx and hookgrad.fx and compared: the
generated code of every produced module, node maps, and results."""

from __future__ import annotations

import importlib

import numpy as np
import pytest

import hookgrad
from tests.fx import _programs as P


def _sub(lib, path):
    return importlib.import_module(f"{lib.__name__}.{path}")


def _split_model(lib):
    nn = lib.nn

    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.param = nn.Parameter(lib.tensor(np.linspace(0, 1, 12).reshape(3, 4),
                                                 dtype=lib.float32))
            self.linear = nn.Linear(4, 5)
            self.sub = nn.Sequential(nn.Linear(5, 5), nn.ReLU())

        def forward(self, x, y):
            z = self.linear(x + self.param).clamp(min=0.0, max=1.0)
            w = self.linear(y).clamp(min=0.0, max=1.0)
            return self.sub(z + w), z

    lib.manual_seed(0)
    return M()


SPLITS = [
    ("by_name", lambda order: lambda n: 0 if n.name in ("add", "linear") else 1, {}),
    ("pairs", lambda order: lambda n: order[n.name] // 2, {}),
    ("original_order", lambda order: lambda n: order[n.name] // 3,
     {"keep_original_order": True}),
    ("reversed_ids", lambda order: lambda n: 2 - order[n.name] // 4,
     {"keep_original_input_name": False, "tuple_return": True}),
    ("affix", lambda order: lambda n: order[n.name] // 5,
     {"partition_affix": "pp", "keep_original_node_name": True}),
    ("one", lambda order: lambda n: 0, {}),
    ("cycle", lambda order: lambda n: len(n.name) % 3, {}),
]


def _run_split(lib, make_cb, kwargs):
    m = _split_model(lib)
    gm = lib.fx.symbolic_trace(m)
    order = {n.name: i for i, n in enumerate(gm.graph.nodes)}
    qualnames: dict = {}
    split = _sub(lib, "fx.passes.split_module").split_module
    try:
        s = split(gm, m, make_cb(order), qualname_map=qualnames, **kwargs)
    except Exception as e:  # noqa: BLE001 - the error type is part of the comparison
        return ("raises", type(e).__name__, str(e))
    x = lib.tensor(np.arange(12.0).reshape(3, 4) / 7, dtype=lib.float32)
    y = lib.tensor(np.arange(12.0).reshape(3, 4)[::-1].copy() / 5, dtype=lib.float32)
    got, want = s(x, y), gm(x, y)
    same = [bool(lib.allclose(a, b)) for a, b in zip(got, want)]
    children = [(name, P.normalise(child.code)) for name, child in s.named_children()]
    return (P.normalise(s.code), qualnames, children, same, sorted(s.meta["partition_names"]))


@pytest.mark.parametrize("name,make_cb,kwargs", SPLITS, ids=[s[0] for s in SPLITS])
def test_split_module_matches_torch(torch, name, make_cb, kwargs):
    got = _run_split(hookgrad, make_cb, kwargs)
    assert got == _run_split(torch, make_cb, kwargs)
    if got[0] != "raises":
        assert all(got[3])


def _grad_region_graph(lib):
    """A hand-built graph with a grad-mode switch spanning two partitions."""
    g = lib.fx.Graph()
    x = g.placeholder("x")
    a = g.call_function(lib.sin, (x,))
    g.call_function(lib._C._set_grad_enabled, (False,))
    b = g.call_function(lib.cos, (a,))
    c = g.call_function(lib.exp, (b,))
    g.output((c,))
    return lib.fx.GraphModule(lib.nn.Module(), g)


def test_split_module_copies_grad_mode_switch_into_later_partitions(torch):
    def run(lib):
        gm = _grad_region_graph(lib)
        ids = {"sin": 0, "_set_grad_enabled": 0, "cos": 1, "exp": 2}
        split = _sub(lib, "fx.passes.split_module").split_module
        s = split(gm, gm, lambda n: ids[n.name])
        children = [(k, P.normalise(c.code)) for k, c in s.named_children()]
        backwards = [2, 1, 0]
        try:
            split(gm, gm, lambda n: backwards[ids[n.name]])
            error = None
        except AssertionError as e:
            error = "monotonically" in str(e)
        return P.normalise(s.code), children, error

    got = run(hookgrad)
    assert got == run(torch)
    hookgrad._C._set_grad_enabled(True)
    torch._C._set_grad_enabled(True)


def _matcher_scenario(lib):
    mu = _sub(lib, "fx.passes.utils.matcher_utils")
    fu = _sub(lib, "fx.passes.utils.fuser_utils")

    def pattern(a, b):
        return lib.relu(a + b)

    def pattern2(a):
        return a.sum(), a * 2

    def pattern3(a):
        return lib.clamp(a, 0.0, 1.0)

    def f(x, y, z):
        u = lib.relu(x + y)
        v = lib.relu(u + z)
        w = lib.relu(x + 1.0)
        s, t = v.sum(), v * 2
        q = lib.clamp(w, 0.0, 1.0) + lib.clamp(t, 0, 1)
        k = x + y
        return s, t, q, k, lib.relu(k)

    graph = lib.fx.symbolic_trace(f).graph
    out = []
    for p in (pattern, pattern2, pattern3):
        pg = lib.fx.symbolic_trace(p).graph
        for kw in ({}, {"match_output": True}, {"match_placeholder": True},
                   {"ignore_literals": True}, {"remove_overlapping_matches": False}):
            for m in mu.SubgraphMatcher(pg, **kw).match(graph):
                out.append((p.__name__, tuple(kw),
                            sorted((a.name, getattr(b, "name", repr(b)))
                                   for a, b in m.nodes_map.items()),
                            [getattr(n, "name", n) for n in m.placeholder_nodes],
                            [n.name for n in m.returning_nodes],
                            [n.name for n in m.anchors]))
    with pytest.raises(ValueError, match="empty pattern"):
        mu.SubgraphMatcher(lib.fx.Graph())
    dead = lib.fx.Graph()
    a = dead.placeholder("a")
    dead.call_function(lib.sin, (a,))
    dead.output(a)
    with pytest.raises(AssertionError, match="dead code"):
        mu.SubgraphMatcher(dead)
    nodes = list(graph.nodes)
    out.append((fu.validate_partition([nodes[3], nodes[5]]), fu.validate_partition(nodes[3:5])))
    return out


def test_subgraph_matcher_matches_torch(torch):
    got = _matcher_scenario(hookgrad)
    assert got == _matcher_scenario(torch)
    assert len(got) > 10


def _pass_manager_scenario(lib):
    infra = _sub(lib, "fx.passes.infra.pass_manager")
    base = _sub(lib, "fx.passes.infra.pass_base")
    legacy = _sub(lib, "fx.passes.pass_manager")
    log = []

    class ReluToSigmoid(base.PassBase):
        def call(self, gm):
            changed = False
            for n in gm.graph.nodes:
                if n.op == "call_function" and n.target is lib.relu:
                    n.target = lib.sigmoid
                    changed = True
            log.append(("relu", changed))
            return base.PassResult(gm, changed)

    def drop_neg(gm):
        for n in list(gm.graph.nodes):
            if n.op == "call_function" and n.target is lib.neg:
                n.replace_all_uses_with(n.args[0])
                gm.graph.erase_node(n)
        log.append("neg")

    wrapped = infra.pass_result_wrapper(drop_neg)
    relu_pass = ReluToSigmoid()

    def f(x):
        return lib.relu(-x) * 2

    gm = lib.fx.symbolic_trace(f)
    pm = infra.PassManager([relu_pass, wrapped], steps=3,
                           constraints=[infra.this_before_that_pass_constraint(wrapped,
                                                                               relu_pass)])
    result = pm(gm)
    out = [P.normalise(result.graph_module.code), result.modified, log,
           [getattr(p, "__name__", type(p).__name__) for p in pm.passes]]
    bad = infra.PassManager([relu_pass, wrapped],
                            constraints=[infra.this_before_that_pass_constraint(wrapped,
                                                                                relu_pass)])
    with pytest.raises(RuntimeError, match="constraint violated"):
        bad.validate_constraints()
    cyc = infra.PassManager([relu_pass, wrapped], constraints=[
        infra.this_before_that_pass_constraint(wrapped, relu_pass),
        infra.this_before_that_pass_constraint(relu_pass, wrapped)])
    with pytest.raises(RuntimeError, match="Circular dependency"):
        cyc(gm)
    with pytest.raises(Exception, match="running the '<lambda>' pass after the following passes: \\['ReluToSigmoid'\\]"):
        infra.PassManager([relu_pass, lambda m: None])(gm)
    with pytest.raises(TypeError):
        infra.PassManager().add_checks(lambda a, b: None)

    def add_one(v):
        return v + 1

    looped = legacy.loop_pass(add_one, n_iter=3)
    lpm = legacy.PassManager.build_from_passlist([looped, legacy.inplace_wrapper(log.append)])
    lpm.add_constraint(legacy.these_before_those_pass_constraint(add_one, log.append))
    out.append(lpm(10))
    lpm.remove_pass(["add_one"])
    out.append([p.__name__ for p in lpm.passes])
    with pytest.raises(AssertionError):
        legacy.loop_pass(add_one)
    return out


def test_pass_managers_match_torch(torch):
    assert _pass_manager_scenario(hookgrad) == _pass_manager_scenario(torch)


def _optimization_scenario(lib):
    nn = lib.nn
    opt = _sub(lib, "fx.experimental.optimization")

    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.c = nn.Conv2d(3, 4, 3)
            self.bn = nn.BatchNorm2d(4)
            self.d = nn.Dropout(0.5)
            self.l = nn.Linear(4, 6)
            self.bn1 = nn.BatchNorm1d(6)
            self.c2 = nn.Conv2d(4, 4, 1)
            self.bn2 = nn.BatchNorm2d(4)

        def forward(self, x):
            z = self.c2(self.bn(self.c(x)))
            p = (self.bn2(z) + z).mean((2, 3))  # bn2's input is read twice: not fused
            return self.bn1(self.l(self.d(p)))

    lib.manual_seed(0)
    m = M()
    rng = np.random.default_rng(0)
    for bn in (m.bn, m.bn1, m.bn2):
        n = bn.num_features
        bn.running_mean.copy_(lib.tensor(rng.uniform(-1, 1, n), dtype=lib.float32))
        bn.running_var.copy_(lib.tensor(rng.uniform(0.5, 2, n), dtype=lib.float32))
    m.eval()
    x = lib.tensor(rng.standard_normal((2, 3, 8, 8)), dtype=lib.float32)
    lib.set_grad_enabled(False)
    fused = opt.fuse(m)
    gm = lib.fx.symbolic_trace(m)
    nodes = list(gm.graph.nodes)
    sub = opt.extract_subgraph(gm, nodes[1:3], [nodes[0]], [nodes[2]])
    inference = opt.optimize_for_inference(m)
    out = [P.normalise(fused.code), sorted(n for n, _ in fused.named_children()),
            float((fused(x) - m(x)).abs().max()) < 1e-5,
            P.normalise(opt.remove_dropout(m).code), P.normalise(sub.code),
            float((sub(x)[0] - m.bn(m.c(x))).abs().max()) < 1e-6,
            [opt.matches_module_pattern((nn.Conv2d, nn.BatchNorm2d), n,
                                        dict(gm.named_modules())) for n in nodes],
            float((inference(x) - m(x)).abs().max()) < 1e-5]
    lib.set_grad_enabled(True)
    return out


def test_experimental_optimization_matches_torch(torch):
    got = _optimization_scenario(hookgrad)
    assert got == _optimization_scenario(torch)
    assert got[2] and got[5] and got[7]


def test_to_folder_writes_an_importable_module(torch, tmp_path):
    import importlib.util
    import sys

    def run(lib, name):
        nn = lib.nn

        class M(nn.Module):
            def __init__(self):
                super().__init__()
                self.l1, self.act, self.bn = nn.Linear(4, 3), nn.GELU(), nn.BatchNorm1d(3)
                self.register_buffer("shift", lib.ones(3))

            def forward(self, x):
                return self.bn(self.act(self.l1(x))) + self.shift

        lib.manual_seed(0)
        gm = lib.fx.symbolic_trace(M().eval())
        folder = tmp_path / name
        with pytest.warns(UserWarning, match="saved as pickled files instead: \\['act'\\]"):
            gm.to_folder(folder, "Exported")
        spec = importlib.util.spec_from_file_location(name, folder / "__init__.py",
                                                      submodule_search_locations=[str(folder)])
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
        x = lib.tensor(np.linspace(-1, 1, 8).reshape(2, 4), dtype=lib.float32)
        rebuilt = module.Exported().eval()
        return sorted(p.name for p in folder.iterdir()), rebuilt(x).tolist(), gm(x).tolist()

    files, got, want = run(hookgrad, "hg_folder")
    t_files, t_got, _ = run(torch, "torch_folder")
    assert files == t_files and got == want
    np.testing.assert_allclose(got, t_got, rtol=1e-6)  # GELU rounds in its last bit


def test_has_side_effect_keeps_calls_through_dead_code_elimination(torch):
    def noted(x):
        return x

    def build(lib):
        g = lib.fx.Graph()
        x = g.placeholder("x")
        g.call_function(noted, (x,))
        g.output(x)
        return g

    for lib in (hookgrad, torch):
        g = build(lib)
        assert g.eliminate_dead_code() and len(g.nodes) == 2
    for lib in (hookgrad, torch):
        assert lib.fx.node.has_side_effect(noted) is noted
        g = build(lib)
        assert not g.eliminate_dead_code() and len(g.nodes) == 3
