"""Interpreter, Transformer, replace_pattern, ShapeProp, wrap and Tracer options, against
torch.fx where the behaviour is observable."""

from __future__ import annotations

import math
import operator

import numpy as np
import pytest

import hookgrad
from tests.fx import _programs as P


def helper(x, k):
    # len() of a traced value fails unless this function is a leaf (wrap).
    return x * k + len(x)


hookgrad.fx.wrap("helper")
try:  # the oracle registers the same global (wrap must run at module level)
    import torch as _torch

    _torch.fx.wrap("helper")
except ImportError:  # pragma: no cover - without the oracle the comparison tests skip
    pass


def _uses_helper(x):
    return helper(x, 2).relu()


def test_wrap_records_a_leaf_call_and_code_matches_torch(torch):
    h = hookgrad.fx.symbolic_trace(_uses_helper)
    t = torch.fx.symbolic_trace(_uses_helper)
    assert [n.target for n in h.graph.nodes][1] is helper
    assert h.graph.find_nodes(op="call_function")[0].meta["is_wrapped"]
    assert P.normalise(h.code) == t.code
    assert float(h(hookgrad.ones(3)).sum()) == float(t(torch.ones(3)).sum()) == 15.0
    again = hookgrad.fx.symbolic_trace(h)  # the emitted wrap() keeps it a leaf on retrace
    assert [n.op for n in again.graph.nodes] == [n.op for n in h.graph.nodes]


def test_wrap_outside_module_scope_raises(torch):
    for lib in (hookgrad, torch):
        with pytest.raises(NotImplementedError):
            lib.fx.wrap("helper")


def test_math_autowrap_and_autowrap_functions(torch):
    def fn(x):
        return x * math.sqrt(x.shape[0]) + double_it(x)

    for lib in (hookgrad, torch):
        tracer = lib.fx.Tracer(autowrap_functions=(double_it,))
        graph = tracer.trace(fn)
        targets = [n.target for n in graph.nodes if n.op == "call_function"]
        assert math.sqrt in targets and double_it in targets
        gm = lib.fx.GraphModule(tracer.root, graph)
        assert float(gm(lib.ones(4)).sum()) == 16.0


def double_it(x):
    return x + x


def test_custom_leaf_policy(torch):
    class Deep(hookgrad.fx.Tracer):
        def is_leaf_module(self, m, name):
            return False

    gm = hookgrad.fx.GraphModule(P.nested_module(hookgrad), Deep().trace(
        P.nested_module(hookgrad)))
    ops = [n.op for n in gm.graph.nodes]
    assert "call_module" not in ops and "get_attr" in ops


def test_param_shapes_constant(torch):
    def scenario(lib):
        class M(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.w = lib.nn.Parameter(lib.ones(3, 2))

            def forward(self, x):
                return x.reshape(-1, self.w.shape[0]) @ self.w

        graph = lib.fx.Tracer(param_shapes_constant=True).trace(M())
        return [(n.op, str(n.target), str(n.args)) for n in graph.nodes]

    h, t = scenario(hookgrad), scenario(torch)
    assert [(a, P.normalise(b), c) for a, b, c in h] == t


def test_interpreter_overrides_and_initial_env(torch):
    def scenario(lib):
        gm = lib.fx.symbolic_trace(P.nested_module(lib))
        seen = []

        class Logging(lib.fx.Interpreter):
            def call_module(self, target, args, kwargs):
                seen.append(target)
                return super().call_module(target, args, kwargs)

            def call_method(self, target, args, kwargs):
                seen.append(target)
                return super().call_method(target, args, kwargs)

        x = lib.ones(2, 4)
        out = Logging(gm).run(x)
        same = bool((out == gm(x)).all())
        with pytest.raises(RuntimeError, match="Expected positional argument"):
            lib.fx.Interpreter(gm).run()
        # initial_env pre-fills values: the nodes given are not run again
        first_block = next(n for n in gm.graph.nodes if n.op == "call_module")
        interp = lib.fx.Interpreter(gm)
        fixed = interp.run(x, initial_env={first_block: lib.zeros(2, 4)})
        boxed = lib.fx.Interpreter(gm).boxed_run([x])
        return (seen, same, tuple(fixed.shape), bool((fixed == out).all()),
                bool((boxed == out).all()))

    assert scenario(hookgrad) == scenario(torch)


def test_transformer_rewrites_and_keeps_results(torch):
    def scenario(lib):
        class Swap(lib.fx.Transformer):
            def call_function(self, target, args, kwargs):
                if target is operator.add:
                    target = operator.mul
                return super().call_function(target, args, kwargs)

        model = P.nested_module(lib)
        new = Swap(lib.fx.symbolic_trace(model)).transform()
        return P.normalise(new.code), [n for n, _ in new.named_modules()]

    assert scenario(hookgrad) == scenario(torch)


def test_transformer_override_calls_public_functions_on_proxies(torch):
    def scenario(lib):
        class NegSigmoid(lib.fx.Transformer):
            def call_function(self, target, args, kwargs):
                if target == lib.sigmoid:  # the way torch's docs compare targets
                    return lib.neg(*args, **kwargs)
                return super().call_function(target, args, kwargs)

        gm = lib.fx.symbolic_trace(lambda x: lib.sigmoid(x) * 2)
        new = NegSigmoid(gm).transform()
        return P.normalise(new.code), new(lib.ones(2)).tolist()

    assert scenario(hookgrad) == scenario(torch)


def test_replace_pattern_matches_torch(torch):
    def scenario(lib):
        def fn(x, y):
            a = lib.relu(x) + y
            b = lib.relu(a) + 1
            c = lib.relu(b).neg()
            return b * a + c

        gm = lib.fx.symbolic_trace(fn)
        from_lib = __import__(f"{lib.__name__}.fx.subgraph_rewriter", fromlist=["x"])
        matches = from_lib.replace_pattern(gm, lambda p, q: lib.relu(p) + q,
                                           lambda p, q: lib.sigmoid(p) - q)
        gm.graph.lint()
        x = lib.ones(3)
        return (P.normalise(gm.code), len(matches), [str(m.anchor) for m in matches],
                [sorted(map(str, m.nodes_map)) for m in matches], gm(x, x).tolist())

    assert scenario(hookgrad) == scenario(torch)


def test_shape_prop_metadata_matches_torch(torch):
    def scenario(lib):
        gm = lib.fx.symbolic_trace(P.nested_module(lib))
        shape_prop = __import__(f"{lib.__name__}.fx.passes.shape_prop", fromlist=["x"])
        shape_prop.ShapeProp(gm).propagate(lib.ones(3, 4))
        return [(n.name, tuple(m.shape), str(m.dtype), m.stride, m.requires_grad,
                 str(m.memory_format), n.meta["type"].__name__)
                for n in gm.graph.nodes for m in [n.meta.get("tensor_meta")]
                if type(m).__name__ == "TensorMetadata"]

    assert scenario(hookgrad) == scenario(torch)


def test_graph_module_from_dict_and_submodule_editing(torch):
    def scenario(lib):
        g = lib.fx.Graph()
        x = g.placeholder("x")
        w = g.get_attr("a.b.w")
        y = g.call_module("m.lin", (x,))
        g.output(g.call_function(operator.add, (y, w)))
        root = {"a.b.w": lib.ones(2), "m.lin": lib.nn.Linear(2, 2)}
        gm = lib.fx.GraphModule(root, g, "Built")
        names = [n for n, _ in gm.named_modules()]
        buffers = [n for n, _ in gm.named_buffers()]
        added = gm.add_submodule("extra.relu", lib.nn.ReLU())
        clash = gm.add_submodule("a.b.w.x", lib.nn.ReLU())
        before = [n for n, _ in gm.named_modules()]
        gm.delete_all_unused_submodules()
        after = [n for n, _ in gm.named_modules()]
        deleted = gm.delete_submodule("m.lin"), gm.delete_submodule("m.nothing")
        with pytest.raises(RuntimeError):
            lib.fx.GraphModule({}, g)
        return names, buffers, added, clash, before, after, deleted, type(gm).__name__

    assert scenario(hookgrad) == scenario(torch)


def test_graph_setter_recompiles_and_state_dict_matches(torch):
    def scenario(lib):
        model = P.mixed_module(lib)
        gm = lib.fx.symbolic_trace(model)
        g = gm.graph
        for n in g.nodes:
            if n.target is operator.sub:
                n.target = operator.add
        gm.recompile()
        code1 = P.normalise(gm.code)
        gm.graph = g
        return code1 == P.normalise(gm.code), "add_1 = 1 + sum_1" in code1, \
            sorted(gm.state_dict()), sorted(n for n, _ in gm.named_parameters())

    assert scenario(hookgrad) == scenario(torch)


def test_concrete_args_placeholder_and_none(torch):
    def scenario(lib):
        def fn(x, y, flag):
            return x + y if flag is None else x

        gm = lib.fx.symbolic_trace(fn, concrete_args={"y": lib.fx.PH, "flag": None})
        with pytest.raises(AssertionError, match="specialized to have value None"):
            gm(lib.ones(1), lib.ones(1), 1)
        return [(n.op, n.name) for n in gm.graph.nodes], gm(lib.ones(1), lib.ones(1), None).tolist()

    assert scenario(hookgrad) == scenario(torch)


def test_constant_tensor_becomes_attribute(torch):
    def scenario(lib):
        const = lib.tensor([1.0, 2.0])

        def fn(x):
            return x + const

        gm = lib.fx.symbolic_trace(fn)
        return P.normalise(gm.code), gm(lib.zeros(2)).tolist(), hasattr(gm, "_tensor_constant0")

    assert scenario(hookgrad) == scenario(torch)


def test_shape_prop_records_requires_grad_and_nested_outputs():
    gm = hookgrad.fx.symbolic_trace(lambda x: (x * 2, [x.sum()]))
    from hookgrad.fx.passes.shape_prop import ShapeProp, TensorMetadata

    ShapeProp(gm).propagate(hookgrad.ones(2, 2, requires_grad=True))
    out_meta = list(gm.graph.nodes)[-1].meta["tensor_meta"]
    assert isinstance(out_meta[0], TensorMetadata) and out_meta[0].requires_grad
    assert out_meta[1][0].shape == hookgrad.Size([])
    assert np.isclose(float(gm(hookgrad.ones(2, 2))[1][0]), 4.0)


def test_tracer_hooks_can_be_overridden(torch):
    def scenario(lib):
        calls = []

        class Recording(lib.fx.Tracer):
            def create_node(self, kind, target, args, kwargs, name=None, type_expr=None):
                node = super().create_node(kind, target, args, kwargs, name, type_expr)
                node.meta["order"] = len(calls)
                calls.append(kind)
                return node

            def call_module(self, m, forward, args, kwargs):
                calls.append(f"module:{self.path_of_module(m)}")
                return super().call_module(m, forward, args, kwargs)

            def getattr(self, attr, attr_val, parameter_proxy_cache):
                calls.append(f"attr:{attr}")
                return super().getattr(attr, attr_val, parameter_proxy_cache)

        graph = Recording().trace(P.mixed_module(lib))
        return calls, [n.meta["order"] for n in graph.nodes]

    assert scenario(hookgrad) == scenario(torch)


def test_proxy_reflected_ops_and_attribute_nodes(torch):
    def scenario(lib):
        def fn(x):
            y = 2 + x
            z = 3 * y - x.T
            return (1 / z) ** x.ndim, x.dtype, (-x) // 2 % 3, 1 - x > 0.5, ~(x > 0)

        gm = lib.fx.symbolic_trace(fn)
        return [(n.op, str(n.target), str(n.args)) for n in gm.graph.nodes]

    h, t = scenario(hookgrad), scenario(torch)
    assert [(a, P.normalise(b), c) for a, b, c in h] == t


def test_decomposition_with_hand_made_proxies(torch):
    # torch.fx's decomposition recipe: rules run on Proxies over a new graph.
    def scenario(lib):
        def relu_decomposition(x):
            return (x > 0) * x

        rules = {lib.relu: relu_decomposition}
        graph = lib.fx.Tracer().trace(lambda x: lib.relu(x) + 1)
        new_graph, env = lib.fx.Graph(), {}
        tracer = lib.fx.proxy.GraphAppendingTracer(new_graph)
        for node in graph.nodes:
            if node.op == "call_function" and node.target in rules:
                args = [lib.fx.Proxy(env[a.name], tracer) if isinstance(a, lib.fx.Node) else a
                        for a in node.args]
                env[node.name] = rules[node.target](*args).node
            else:
                env[node.name] = new_graph.node_copy(node, lambda a: env[a.name])
        gm = lib.fx.GraphModule(lib.nn.Module(), new_graph)
        return P.normalise(gm.code), gm(lib.tensor([-1.0, 2.0])).tolist()

    assert scenario(hookgrad) == scenario(torch)


def test_decorated_forward_runs_its_decorator(torch):
    import functools

    def scenario(lib):
        def doubled(fn):
            @functools.wraps(fn)
            def inner(*args, **kwargs):
                return fn(*args, **kwargs) * 2
            return inner

        class M(lib.nn.Module):
            @doubled
            def forward(self, x):
                return x + 1

        gm = lib.fx.symbolic_trace(M())
        return P.normalise(gm.code), gm(lib.zeros(1)).tolist()

    assert scenario(hookgrad) == scenario(torch)
