"""Graph and Node editing API, run the same way on torch.fx and hookgrad.fx."""

from __future__ import annotations

import operator

import pytest

import hookgrad
from tests.fx._programs import normalise


def _simple(lib):
    g = lib.fx.Graph()
    x = g.placeholder("x")
    y = g.placeholder("y", default_value=2)
    a = g.call_function(operator.add, (x, y))
    r = g.call_method("relu", (a,))
    s = g.call_function(lib.sum, (r,), {"dtype": None})
    g.output((s, a))
    return g, x, y, a, r, s


def _code(lib, g):
    return normalise(g.python_code("self").src)


def _run_both(torch, scenario):
    return scenario(hookgrad), scenario(torch)


def test_graph_building_and_code_match_torch(torch):
    h, t = _run_both(torch, lambda lib: (_code(lib, _simple(lib)[0]), str(_simple(lib)[0])))
    assert (normalise(h[0]), normalise(h[1])) == t


def test_node_use_lists(torch):
    def scenario(lib):
        g, x, y, a, r, s = _simple(lib)
        out = [list(map(str, x.users)), list(map(str, a.users)), list(map(str, r.all_input_nodes))]
        r.replace_input_with(a, x)
        out.append((list(map(str, a.users)), list(map(str, x.users)), str(r.args)))
        changed = x.replace_all_uses_with(y)
        out.append((sorted(map(str, changed)), list(map(str, y.users))))
        r.update_arg(0, a)
        s.update_kwarg("dtype", lib.float64)
        out.append((str(r.args), str(s.kwargs), list(map(str, a.users))))
        out.append(_code(lib, g))
        return out

    h, t = _run_both(torch, scenario)
    assert h == t


def test_inserting_before_after_prepend_append(torch):
    def scenario(lib):
        g, x, y, a, r, s = _simple(lib)
        with g.inserting_after(a):
            n = g.call_function(operator.mul, (a, 3))
        with g.inserting_before(a):
            m = g.call_method("neg", (x,))
        r.replace_input_with(a, n)
        a.update_arg(0, m)
        s.prepend(n)  # moves n just before s: r (which reads n) now comes first
        r.append(m)  # moves m after r: a (which reads m) now comes before it
        order = [node.name for node in g.nodes]
        try:
            g.lint()
            lint = None
        except RuntimeError as e:
            lint = type(e).__name__
        return order, lint

    h, t = _run_both(torch, scenario)
    assert h == t and h[1] == "RuntimeError"


def test_erase_node_errors_and_dce(torch):
    def scenario(lib):
        g, x, y, a, r, s = _simple(lib)
        with pytest.raises(RuntimeError) as info:
            g.erase_node(a)
        dead = g.call_function(operator.mul, (x, 2))
        changed = g.eliminate_dead_code()
        names = [n.name for n in g.nodes]
        g.output_node().args = ((s,),)
        g.eliminate_dead_code()
        return str(info.value).split("!")[0], changed, names, [n.name for n in g.nodes], \
            dead.name

    h, t = _run_both(torch, scenario)
    assert h == t


def test_graph_copy_node_copy_and_deepcopy(torch):
    import copy

    def scenario(lib):
        g = _simple(lib)[0]
        g2 = lib.fx.Graph()
        env = {}
        out = g2.graph_copy(g, env)
        g2.output(out)
        g3 = copy.deepcopy(g)
        g4 = lib.fx.Graph()
        x = g4.placeholder("x")
        c = g4.node_copy(list(g.nodes)[3], lambda n: x)
        return _code(lib, g2), _code(lib, g3), c.name, str(c.args)

    h, t = _run_both(torch, scenario)
    assert h == t


def test_lint_errors(torch):
    def scenario(lib):
        g, x, y, a, r, s = _simple(lib)
        other = lib.fx.Graph()
        z = other.placeholder("z")
        a.update_arg(0, z)
        with pytest.raises(RuntimeError) as e1:
            g.lint()
        a.update_arg(0, x)
        x.append(r)  # r now runs before a
        with pytest.raises(RuntimeError) as e2:
            g.lint()
        return str(e1.value).split("\n")[0], str(e2.value).split("\n")[0]

    h, t = _run_both(torch, scenario)
    assert h == t


def test_print_tabular_needs_tabulate(torch):
    try:
        import tabulate  # noqa: F401
    except ImportError:
        for lib in (hookgrad, torch):
            with pytest.raises(ImportError):
                _simple(lib)[0].print_tabular()
        return
    for lib in (hookgrad, torch):  # with tabulate both print the same rows
        _simple(lib)[0].print_tabular()


def test_format_node_and_node_meta():
    g, x, y, a, r, s = _simple(hookgrad)
    assert a.format_node() == "%add : [num_users=2] = call_function[target=operator.add]" \
        "(args = (%x, %y), kwargs = {})"
    a.meta["k"] = 1
    n = hookgrad.fx.Graph().node_copy(a, lambda n: n)
    assert n.meta == {"k": 1} and n.meta is not a.meta
    with pytest.raises(TypeError):
        a.args[0:1] = ()  # args is a tuple
    lst = hookgrad.fx.Graph().call_function(hookgrad.cat, ([x, y],))
    with pytest.raises(TypeError, match="does not support mutation"):
        lst.args[0].append(x)


def test_create_node_validates_op_and_target():
    g = hookgrad.fx.Graph()
    with pytest.raises(AssertionError):
        g.create_node("call_everything", "x")
    with pytest.raises(ValueError):
        g.create_node("call_method", operator.add)
    with pytest.raises(ValueError):
        g.create_node("call_function", "add")


def test_walk_survives_erasing_and_sees_insertions(torch):
    def scenario(lib):
        g, x, y, a, r, s = _simple(lib)
        seen = []
        for node in g.nodes:
            seen.append(node.name)
            if node is a:
                with g.inserting_after(a):
                    g.call_function(operator.neg, (a,))
            if node.name == "neg":
                g.erase_node(node)
        return seen, [n.name for n in g.nodes], len(g.nodes)

    assert scenario(hookgrad) == scenario(torch)
